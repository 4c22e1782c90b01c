import { createHmac, timingSafeEqual } from 'node:crypto';
import type { Context, MiddlewareHandler } from 'hono';
import { getCookie } from 'hono/cookie';

/** The dashboard's session cookie. */
export const SESSION_COOKIE = 'wfsync_session';

/**
 * Signing in proves knowledge of WFS_DASHBOARD_TOKEN; the cookie holds an HMAC of it, never the token, so a
 * new token signs everyone out. Without a token nobody can sign in and the dashboard stays read-only.
 */
export class DashboardAuth {
  readonly #session?: string;

  constructor(token: string | undefined) {
    this.#session = token ? createHmac('sha256', token).update('wfsync dashboard session').digest('base64url') : undefined;
  }

  get enabled(): boolean {
    return this.#session !== undefined;
  }

  /** The cookie value for a correct token; undefined otherwise. */
  signIn(token: string): string | undefined {
    if (!this.#session) return undefined;
    const given = createHmac('sha256', token).update('wfsync dashboard session').digest('base64url');
    return same(given, this.#session) ? this.#session : undefined;
  }

  signedIn(c: Context): boolean {
    const cookie = getCookie(c, SESSION_COOKIE);
    return !!this.#session && !!cookie && same(cookie, this.#session);
  }

  /** Refuses anything but reading unless signed in: acting on jobs is acting on Redis. */
  guardWrites(): MiddlewareHandler {
    return async (c, next) => {
      if (c.req.method === 'GET' || c.req.method === 'HEAD' || this.signedIn(c)) return next();
      return c.json({ error: this.enabled ? 'sign in at /signin to act on jobs' : 'read-only: WFS_DASHBOARD_TOKEN is not set' }, 403);
    };
  }
}

function same(a: string, b: string): boolean {
  const x = Buffer.from(a);
  const y = Buffer.from(b);
  return x.length === y.length && timingSafeEqual(x, y);
}
