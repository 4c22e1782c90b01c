import { Hono } from 'hono';
import { setCookie } from 'hono/cookie';
import { describe, expect, it } from 'vitest';
import { loadConfig } from '../../src/config.ts';
import { DashboardAuth, SESSION_COOKIE, SIGN_IN_LIMITS, SignInThrottle } from '../../src/ops/auth.ts';

/** Dashboard sessions on a clock the test moves: one per sign-in, ended by sign-out, idle time and the cap. */

const TOKEN = 'dashboard-token-0123456789';
const MINUTE = 60_000;

function rig(options = { idleMs: 30 * MINUTE, maxAgeMs: 12 * 60 * MINUTE, secure: false }) {
  let now = Date.parse('2026-03-01T08:00:00Z');
  const auth = new DashboardAuth(TOKEN, options, () => now);
  const app = new Hono();
  app.post('/in', async (c) => {
    const r = auth.signIn((await c.req.text()) || TOKEN, 'client-a');
    if (r.kind !== 'ok') return c.json(r, 403);
    setCookie(c, SESSION_COOKIE, r.session, auth.cookie);
    return c.body(null, 204);
  });
  app.get('/me', (c) => c.json({ signedIn: auth.signedIn(c) }));
  app.post('/out', (c) => {
    auth.signOut(c);
    return c.body(null, 204);
  });
  const signIn = async () => {
    const res = await app.request('/in', { method: 'POST' });
    return { cookie: res.headers.get('set-cookie')!.split(';')[0]!, header: res.headers.get('set-cookie')! };
  };
  const signedIn = async (cookie: string) =>
    ((await (await app.request('/me', { headers: { cookie } })).json()) as { signedIn: boolean }).signedIn;
  return { auth, app, signIn, signedIn, advance: (ms: number) => (now += ms) };
}

describe('dashboard sessions', () => {
  it('gives each sign-in its own session, never the token or a value derived from it alone', async () => {
    const r = rig();
    const a = await r.signIn();
    const b = await r.signIn();
    expect(a.cookie).not.toBe(b.cookie);
    expect(a.cookie).not.toContain(TOKEN);
    expect(await r.signedIn(a.cookie)).toBe(true);
    expect(await r.signedIn(b.cookie)).toBe(true);
    expect(a.header).toMatch(/HttpOnly/);
    expect(a.header).toMatch(/SameSite=Strict/);
    expect(a.header).not.toMatch(/Secure/);
  });

  it('ends a session at sign-out: a copy of the cookie stops working, other sessions go on', async () => {
    const r = rig();
    const a = await r.signIn();
    const b = await r.signIn();
    await r.app.request('/out', { method: 'POST', headers: { cookie: a.cookie } });
    expect(await r.signedIn(a.cookie)).toBe(false);
    expect(await r.signedIn(b.cookie)).toBe(true);
  });

  it('ends a session left idle, and any session at the absolute cap however busy', async () => {
    const r = rig({ idleMs: 30 * MINUTE, maxAgeMs: 2 * 60 * MINUTE, secure: false });
    const idle = await r.signIn();
    const busy = await r.signIn();
    for (let i = 0; i < 5; i++) {
      r.advance(20 * MINUTE);
      expect(await r.signedIn(busy.cookie)).toBe(true);
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

  it('keeps a bounded number of sessions, dropping expired ones and then the least recently used', async () => {
    const r = rig();
    for (let i = 0; i < 500; i++) r.auth.signIn(TOKEN, 'client-a');
    r.advance(31 * MINUTE);
    // The 500 expired ones are dropped at the next sign-in.
    const oldest = await r.signIn();
    expect(r.auth.sessionCount).toBe(1);
    const used = await r.signIn();
    for (let i = 0; i < 997; i++) r.auth.signIn(TOKEN, 'client-a');
    expect(await r.signedIn(oldest.cookie)).toBe(true);
    expect(r.auth.sessionCount).toBe(999);
    // Full at 1000: the least recently used (used, not oldest, which was just read) gives way.
    for (let i = 0; i < 2; i++) r.auth.signIn(TOKEN, 'client-a');
    expect(r.auth.sessionCount).toBe(1000);
    expect(await r.signedIn(used.cookie)).toBe(false);
    expect(await r.signedIn(oldest.cookie)).toBe(true);
  });
});

describe('failed sign-ins', () => {
  it('throttles a client after its failures, right token or not, until the window ends; others are not held', () => {
    let now = 0;
    const auth = new DashboardAuth(TOKEN, undefined, () => now);
    for (let i = 0; i < SIGN_IN_LIMITS.perClient; i++)
      expect(auth.signIn('wrong-token-guess', '10.0.0.1').kind).toBe('wrong');
    const held = auth.signIn(TOKEN, '10.0.0.1');
    expect(held).toEqual({ kind: 'throttled', retryAfterS: SIGN_IN_LIMITS.windowMs / 1000 });
    expect(auth.signIn(TOKEN, '10.0.0.2').kind).toBe('ok');
    now += SIGN_IN_LIMITS.windowMs;
    expect(auth.signIn(TOKEN, '10.0.0.1').kind).toBe('ok');
  });

  it('throttles everyone once failures from all clients pass the overall limit', () => {
    let now = 0;
    const t = new SignInThrottle(() => now);
    for (let i = 0; i < SIGN_IN_LIMITS.overall; i++) t.failed(`10.1.${Math.floor(i / 200)}.${i % 200}`);
    expect(t.retryAfterS('192.168.1.1')).toBe(SIGN_IN_LIMITS.windowMs / 1000);
    now += SIGN_IN_LIMITS.windowMs / 2;
    expect(t.retryAfterS('192.168.1.1')).toBe(SIGN_IN_LIMITS.windowMs / 2000);
    now += SIGN_IN_LIMITS.windowMs / 2;
    expect(t.retryAfterS('192.168.1.1')).toBe(0);
  });

  it('without a token nobody signs in', () => {
    const auth = new DashboardAuth(undefined);
    expect(auth.enabled).toBe(false);
    expect(auth.signIn('', 'x').kind).toBe('off');
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
