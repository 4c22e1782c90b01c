import { createServer, type Server } from 'node:http';
import type { AddressInfo } from 'node:net';
import Provider from 'oidc-provider';
import { chromium, type Browser, type Page } from 'playwright-core';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { startSandbox, type RunningSandbox } from '../../src/sandbox/index.ts';
import { startTestApp, type TestApp } from './helpers.ts';

/**
 * Sign-in through a real OpenID Connect provider (oidc-provider on loopback, its development login form) in
 * headless Chromium: an admin, an operator and a viewer each see what their role allows, a viewer's forged POST
 * is refused, sessions outlive a restart of the server, and forged, replayed and wrong-issuer sign-ins are refused.
 */

const GROUPS: Record<string, string[]> = {
  ann: ['wfs-admins'],
  otto: ['wfs-operators', 'staff'],
  vera: ['staff'],
  eve: ['contractors'],
};

let sandbox: RunningSandbox;
let issuer: Server;
let issuerUrl: string;
let t: TestApp;
let browser: Browser;

async function freePort(): Promise<number> {
  const s = createServer();
  await new Promise<void>((r) => s.listen(0, '127.0.0.1', r));
  const { port } = s.address() as AddressInfo;
  await new Promise<void>((r) => s.close(() => r()));
  return port;
}

function settings(port: number, over: Record<string, string> = {}): Record<string, string> {
  return {
    WFS_HTTP_PORT: String(port),
    WFS_OIDC_ISSUER: issuerUrl,
    WFS_OIDC_CLIENT_ID: 'wfsync',
    WFS_OIDC_CLIENT_SECRET: 'wfsync-client-secret-0123',
    WFS_PUBLIC_URL: `http://127.0.0.1:${port}`,
    WFS_OIDC_ADMINS: 'wfs-admins',
    WFS_OIDC_OPERATORS: 'wfs-operators',
    WFS_OIDC_VIEWERS: 'staff',
    WFS_DASHBOARD_TOKEN: 'a-dashboard-token-that-no-longer-signs-in',
    ...over,
  };
}

beforeAll(async () => {
  sandbox = await startSandbox({ port: 0, seed: 6, size: 'tiny', rateLimit: { limit: 100, periodMs: 1000 } });
  const [port, other] = [await freePort(), await freePort()];
  issuer = createServer();
  await new Promise<void>((r) => issuer.listen(0, '127.0.0.1', r));
  issuerUrl = `http://127.0.0.1:${(issuer.address() as AddressInfo).port}`;
  const provider = new Provider(issuerUrl, {
    clients: [
      {
        client_id: 'wfsync',
        client_secret: 'wfsync-client-secret-0123',
        redirect_uris: [port, other].map((p) => `http://127.0.0.1:${p}/signin/callback`),
      },
    ],
    findAccount: async (_ctx: unknown, id: string) => ({
      accountId: id,
      claims: async () => ({ sub: id, email: `${id}@example.org`, email_verified: true, groups: GROUPS[id] ?? [] }),
    }),
    claims: { openid: ['sub'], email: ['email', 'email_verified'], profile: ['groups'] },
    conformIdTokenClaims: false,
  });
  issuer.on('request', provider.callback());
  t = await startTestApp(sandbox, settings(port));
  (t as { other?: number }).other = other;
  browser = await chromium.launch({
    executablePath: process.env.CHROMIUM_PATH ?? '/usr/bin/chromium',
    args: ['--no-sandbox'],
  });
}, 120_000);

afterAll(async () => {
  await browser?.close();
  await t?.close();
  await new Promise<void>((r) => (issuer ? issuer.close(() => r()) : r()));
  await sandbox?.close();
});

/** Signs in at the provider's login form in a browser of its own; answers the page, back on the overview. */
async function signIn(user: string, base = t.server.url): Promise<Page> {
  const page = await (await browser.newContext()).newPage();
  // The provider's page would load a web font: nothing leaves the machine.
  await page.route(/fonts\.googleapis/, (r) => r.abort());
  await page.goto(`${base}/signin`);
  await page.waitForURL(`${issuerUrl}/**`);
  await page.fill('input[name="login"]', user);
  await page.fill('input[name="password"]', 'any');
  await page.click('button[type="submit"]');
  await page.click('button[type="submit"]');
  await page.waitForURL(`${base}/`);
  return page;
}

describe('sign-in through the identity provider', () => {
  it('/signin redirects to the authorization endpoint with the client id and a PKCE challenge', async () => {
    const res = await t.get('/signin');
    expect(res.status).toBe(302);
    const to = new URL(res.headers.get('location')!);
    expect(to.origin).toBe(issuerUrl);
    expect(to.searchParams.get('client_id')).toBe('wfsync');
    expect(to.searchParams.get('code_challenge_method')).toBe('S256');
    expect(to.searchParams.get('code_challenge')).toMatch(/^[\w-]{43}$/);
    expect(to.searchParams.get('state')).toBeTruthy();
    expect(to.searchParams.get('nonce')).toBeTruthy();
    // The shared token does not sign in once an identity provider is set.
    const token = await t.get('/signin', { method: 'POST', body: new URLSearchParams({ token: 'x' }) });
    expect(token.status).toBe(404);
  });

  it('signs in an admin, an operator and a viewer, each seeing what the role allows', async () => {
    const ann = await signIn('ann');
    expect(await ann.locator('#signed-in').textContent()).toBe('oidc:ann@example.org (admin)');
    await ann.goto(`${t.server.url}/companies`);
    expect(await ann.locator('form[action="/actions/companies"]').count()).toBe(1);

    const otto = await signIn('otto');
    expect(await otto.locator('#signed-in').textContent()).toBe('oidc:otto@example.org (operator)');
    await otto.goto(`${t.server.url}/companies/north`);
    expect(await otto.locator('button:has-text("re-sync")').count()).toBeGreaterThan(0);
    await otto.goto(`${t.server.url}/companies`);
    expect(await otto.locator('form[action="/actions/companies"]').count()).toBe(0);
    const add = await otto.request.post(`${t.server.url}/actions/companies`, { form: { key: 'x' } });
    expect(add.status()).toBe(403);

    const vera = await signIn('vera');
    expect(await vera.locator('#signed-in').textContent()).toBe('oidc:vera@example.org (viewer)');
    await vera.goto(`${t.server.url}/companies/north`);
    expect(await vera.locator('button:has-text("re-sync")').count()).toBe(0);
    const forged = await vera.request.post(`${t.server.url}/actions/run`, {
      form: { company: 'north', stream: 'departments' },
    });
    expect(forged.status()).toBe(403);
    expect(await forged.text()).toMatch(/oidc:vera@example.org is a viewer; this needs an operator/);

    const wh = await t.app.warehouse();
    const rows = await wh.sql`select actor, target, outcome from ${wh.sql(wh.schema)}.audit where action = 'sign-in'`;
    expect(rows.map((r) => [r.actor, r.target, r.outcome])).toEqual(
      expect.arrayContaining([
        ['oidc:ann@example.org', 'role admin', 'done'],
        ['oidc:otto@example.org', 'role operator', 'done'],
        ['oidc:vera@example.org', 'role viewer', 'done'],
      ]),
    );

    // A session lives in the warehouse: another server of it (a restart, a replica) knows it.
    const other = (t as { other?: number }).other!;
    const again = await startTestApp(sandbox, { ...settings(other), DATABASE_URL: t.databaseUrl });
    try {
      await ann.goto(`${again.server.url}/`);
      expect(await ann.locator('#signed-in').textContent()).toBe('oidc:ann@example.org (admin)');
    } finally {
      await again.close();
    }
  }, 180_000);

  it('refuses someone in none of the groups, a forged state and a replayed code', async () => {
    const eve = await (await browser.newContext()).newPage();
    await eve.route(/fonts\.googleapis/, (r) => r.abort());
    await eve.goto(`${t.server.url}/signin`);
    await eve.fill('input[name="login"]', 'eve');
    await eve.fill('input[name="password"]', 'any');
    await eve.click('button[type="submit"]');
    const callback = eve.waitForRequest(/\/signin\/callback/);
    await eve.click('button[type="submit"]');
    const used = new URL((await callback).url());
    await eve.waitForSelector('.failed');
    expect(await eve.locator('.failed').textContent()).toMatch(/not in a group of WFS_OIDC_VIEWERS/);

    const forged = await t.get(`/signin/callback?code=abc&state=forged`, {
      headers: { cookie: 'wfsync_signin=forged' },
    });
    expect(forged.status).toBe(403);
    // The code eve's sign-in used, sent again with a sign-in of its own: the provider refuses it.
    const begun = await t.get('/signin');
    const state = new URL(begun.headers.get('location')!).searchParams.get('state')!;
    const replay = await t.get(`/signin/callback?code=${used.searchParams.get('code')}&state=${state}`, {
      headers: { cookie: `wfsync_signin=${state}` },
    });
    expect(replay.status).toBe(403);
    expect(await replay.text()).toMatch(/the ID token or code was refused/);

    const wh = await t.app.warehouse();
    const refused = await wh.sql`select actor, reason from ${wh.sql(wh.schema)}.audit
                                 where action = 'sign-in' and outcome = 'refused' order by id`;
    expect(refused.map((r) => r.actor)).toEqual(['oidc:eve@example.org', 'oidc:unknown', 'oidc:unknown']);
  }, 120_000);

  it('refuses a sign-in that waited for its callback past ten minutes', async () => {
    const begun = await t.get('/signin');
    const state = new URL(begun.headers.get('location')!).searchParams.get('state')!;
    const wh = await t.app.warehouse();
    await wh.sql`update ${wh.sql(wh.schema)}.sign_ins set started_at = now() - interval '11 minutes'`;
    const late = await t.get(`/signin/callback?code=abc&state=${state}`, {
      headers: { cookie: `wfsync_signin=${state}` },
    });
    expect(late.status).toBe(403);
    expect(await late.text()).toMatch(/no sign-in under way for this state \(used, expired or forged\)/);
    expect(late.headers.get('set-cookie') ?? '').not.toMatch(/wfsync_session=[^;]/);
  }, 60_000);

  it('refuses an issuer that is not the one its metadata names', async () => {
    const wrong = await startTestApp(
      sandbox,
      settings(0, { WFS_OIDC_ISSUER: issuerUrl.replace('127.0.0.1', 'localhost') }),
    );
    try {
      const res = await wrong.get('/signin');
      expect(res.status).toBe(503);
      expect(res.headers.get('location')).toBeNull();
    } finally {
      await wrong.close();
    }
  }, 60_000);
});
