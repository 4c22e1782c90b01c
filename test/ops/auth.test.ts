import { Hono } from 'hono';
import { setCookie } from 'hono/cookie';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { loadConfig } from '../../src/config.ts';
import { DashboardAuth, operatorOf, SESSION_COOKIE, SIGN_IN_LIMITS, SignInThrottle } from '../../src/ops/auth.ts';
import { openWarehouse, type Warehouse } from '../../src/warehouse/connection.ts';
import { countSessions } from '../../src/warehouse/sessions.ts';
import { freshDatabase } from '../support/db.ts';

/**
 * Dashboard sessions, kept in the warehouse, on a clock the test moves: one per sign-in, ended by sign-out, idle
 * time and the cap; a second server of the same warehouse knows them, and a sign-out ends them there too.
 */

const TOKEN = 'dashboard-token-0123456789';
const MINUTE = 60_000;
let wh: Warehouse;

beforeAll(async () => {
  wh = await openWarehouse({ databaseUrl: await freshDatabase({ migrated: true }) });
  await wh.migrate();
});
afterAll(() => wh?.close());

function rig(options = { idleMs: 30 * MINUTE, maxAgeMs: 12 * 60 * MINUTE, secure: false }) {
  let now = Date.parse('2026-03-01T08:00:00Z');
  const server = () => {
    const auth = new DashboardAuth(wh, TOKEN, options, () => now);
    const app = new Hono();
    app.use('*', auth.resolve());
    app.post('/in', async (c) => {
      const r = await auth.signIn((await c.req.text()) || TOKEN, 'client-a');
      if (r.kind !== 'ok') return c.json(r, 403);
      setCookie(c, SESSION_COOKIE, r.session, auth.cookie);
      return c.body(null, 204);
    });
    app.get('/me', (c) => c.json({ signedIn: !!operatorOf(c), who: operatorOf(c) ?? null }));
    app.post('/out', async (c) => {
      await auth.signOut(c);
      return c.body(null, 204);
    });
    return { auth, app };
  };
  const one = server();
  const other = server();
  const signIn = async () => {
    const res = await one.app.request('/in', { method: 'POST' });
    return { cookie: res.headers.get('set-cookie')!.split(';')[0]!, header: res.headers.get('set-cookie')! };
  };
  const me = async (cookie: string, on = one) =>
    (await (await on.app.request('/me', { headers: { cookie } })).json()) as { signedIn: boolean; who: unknown };
  const signedIn = async (cookie: string, on = one) => (await me(cookie, on)).signedIn;
  return { ...one, other, signIn, signedIn, me, advance: (ms: number) => (now += ms) };
}

describe('dashboard sessions', () => {
  it('gives each sign-in its own session, never the token or a value derived from it alone', async () => {
    const r = rig();
    const a = await r.signIn();
    const b = await r.signIn();
    expect(a.cookie).not.toBe(b.cookie);
    expect(a.cookie).not.toContain(TOKEN);
    expect(await r.me(a.cookie)).toEqual({ signedIn: true, who: { actor: 'token:dashboard', role: 'admin' } });
    expect(await r.signedIn(b.cookie)).toBe(true);
    expect(a.header).toMatch(/HttpOnly/);
    expect(a.header).toMatch(/SameSite=Strict/);
    expect(a.header).not.toMatch(/Secure/);
    // The warehouse holds a hash of the session, not the cookie's value.
    const stored = await wh.sql`select session_hash from workforce.sessions`;
    expect(JSON.stringify(stored)).not.toContain(a.cookie.split('=')[1]);
  });

  it('is known to a second server of the warehouse; a sign-out on one ends it on both, other sessions go on', async () => {
    const r = rig();
    const a = await r.signIn();
    const b = await r.signIn();
    expect(await r.signedIn(a.cookie, r.other)).toBe(true);
    await r.app.request('/out', { method: 'POST', headers: { cookie: a.cookie } });
    expect(await r.signedIn(a.cookie)).toBe(false);
    expect(await r.signedIn(a.cookie, r.other)).toBe(false);
    expect(await r.signedIn(b.cookie, r.other)).toBe(true);
  });

  it('ends a session left idle, and any session at the absolute cap however busy', async () => {
    const r = rig({ idleMs: 30 * MINUTE, maxAgeMs: 2 * 60 * MINUTE, secure: false });
    const idle = await r.signIn();
    const busy = await r.signIn();
    for (let i = 0; i < 5; i++) {
      r.advance(20 * MINUTE);
      expect(await r.signedIn(busy.cookie, i % 2 ? r.other : undefined)).toBe(true);
    }
    expect(await r.signedIn(idle.cookie)).toBe(false);
    r.advance(20 * MINUTE);
    // 120 minutes since sign-in: the cap, though used 20 minutes ago.
    expect(await r.signedIn(busy.cookie)).toBe(false);
  });

  it('marks the cookie Secure when the server is reached over HTTPS', async () => {
    const r = rig({ idleMs: MINUTE, maxAgeMs: 60 * MINUTE, secure: true });
    const a = await r.signIn();
    expect(a.header).toMatch(/; Secure/);
    expect(a.header).toMatch(/Max-Age=3600/);
  });

  it('drops expired sessions at the next sign-in', async () => {
    const r = rig();
    for (let i = 0; i < 50; i++) await r.signIn();
    r.advance(13 * 60 * MINUTE);
    await r.signIn();
    expect(await countSessions(wh)).toBe(1);
  });
});

describe('failed sign-ins', () => {
  it('throttles a client after its failures, right token or not, until the period ends; others are not held', async () => {
    let now = 0;
    const auth = new DashboardAuth(wh, TOKEN, undefined, () => now);
    for (let i = 0; i < SIGN_IN_LIMITS.perClient; i++)
      expect((await auth.signIn('wrong-token-guess', '10.0.0.1')).kind).toBe('wrong');
    const held = await auth.signIn(TOKEN, '10.0.0.1');
    expect(held).toEqual({ kind: 'throttled', retryAfterS: SIGN_IN_LIMITS.periodMs / 1000 });
    expect((await auth.signIn(TOKEN, '10.0.0.2')).kind).toBe('ok');
    now += SIGN_IN_LIMITS.periodMs;
    expect((await auth.signIn(TOKEN, '10.0.0.1')).kind).toBe('ok');
  });

  it('throttles everyone once failures from all clients pass the overall limit', () => {
    let now = 0;
    const t = new SignInThrottle(() => now);
    for (let i = 0; i < SIGN_IN_LIMITS.overall; i++) t.failed(`10.1.${Math.floor(i / 200)}.${i % 200}`);
    expect(t.retryAfterS('192.168.1.1')).toBe(SIGN_IN_LIMITS.periodMs / 1000);
    now += SIGN_IN_LIMITS.periodMs / 2;
    expect(t.retryAfterS('192.168.1.1')).toBe(SIGN_IN_LIMITS.periodMs / 2000);
    now += SIGN_IN_LIMITS.periodMs / 2;
    expect(t.retryAfterS('192.168.1.1')).toBe(0);
  });

  it('without a token nobody signs in', async () => {
    const auth = new DashboardAuth(wh, undefined);
    expect(auth.tokenSignIn).toBe(false);
    expect((await auth.signIn('', 'x')).kind).toBe('off');
  });
});

describe('session settings', () => {
  it('default to 30 minutes idle, 12 hours at most, a cookie for plain HTTP; WFS_COOKIE_SECURE=1 makes it HTTPS-only', () => {
    expect(loadConfig({}).sessions).toEqual({ idleMs: 30 * MINUTE, maxAgeMs: 12 * 60 * MINUTE, secure: false });
    expect(
      loadConfig({ WFS_SESSION_IDLE_MINUTES: '5', WFS_SESSION_MAX_HOURS: '1', WFS_COOKIE_SECURE: '1' }).sessions,
    ).toEqual({ idleMs: 5 * MINUTE, maxAgeMs: 60 * MINUTE, secure: true });
  });

  it('refuses a bad value in one line naming the setting', () => {
    expect(() => loadConfig({ WFS_COOKIE_SECURE: 'yes' })).toThrow(/^setting WFS_COOKIE_SECURE: expected 1 or 0$/);
    expect(() => loadConfig({ WFS_SESSION_IDLE_MINUTES: '0' })).toThrow(/^setting WFS_SESSION_IDLE_MINUTES: /);
  });
});
