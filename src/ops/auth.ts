import { createHash, createHmac, randomBytes, timingSafeEqual } from 'node:crypto';
import type { Context, MiddlewareHandler } from 'hono';
import { getCookie } from 'hono/cookie';
import type { CookieOptions } from 'hono/utils/cookie';
import { DEFAULTS } from '../config.ts';

/** The dashboard's session cookie. */
export const SESSION_COOKIE = 'wfsync_session';

export interface SessionOptions {
  /** A session unused this long ends. */
  idleMs: number;
  /** A session ends this long after sign-in, however busy. */
  maxAgeMs: number;
  /** The cookie is sent over HTTPS only (the server is reached through TLS). */
  secure: boolean;
}

export const DEFAULT_SESSIONS: SessionOptions = {
  idleMs: DEFAULTS.sessionIdleMinutes * 60_000,
  maxAgeMs: DEFAULTS.sessionMaxHours * 3600_000,
  secure: false,
};

/** Sessions held at once: past this the least recently used one ends, so sign-ins cannot grow memory. */
const MAX_SESSIONS = 1000;

export type SignIn =
  | { kind: 'ok'; session: string }
  | { kind: 'wrong' }
  | { kind: 'off' }
  | { kind: 'throttled'; retryAfterS: number };

interface Session {
  createdAt: number;
  seenAt: number;
}

/**
 * Signing in proves knowledge of WFS_DASHBOARD_TOKEN and starts a session of its own: a random id in the cookie,
 * kept in this process's memory (by its hash) with when it began and was last used. Signing out ends it, as do
 * idle time, the absolute cap and a restart. Without a token nobody can sign in and the dashboard stays read-only.
 */
export class DashboardAuth {
  readonly #token?: Buffer;
  readonly #sessions = new Map<string, Session>();
  readonly #throttle: SignInThrottle;

  constructor(
    token: string | undefined,
    readonly options: SessionOptions = DEFAULT_SESSIONS,
    readonly now: () => number = Date.now,
  ) {
    this.#token = token ? digest(token) : undefined;
    this.#throttle = new SignInThrottle(now);
  }

  get enabled(): boolean {
    return this.#token !== undefined;
  }

  /** Sessions currently held (expired ones are dropped at the next sign-in). */
  get sessionCount(): number {
    return this.#sessions.size;
  }

  /** A new session for the right token from a client not throttled for failing too often. */
  signIn(token: string, client: string): SignIn {
    if (!this.#token) return { kind: 'off' };
    const wait = this.#throttle.retryAfterS(client);
    if (wait > 0) return { kind: 'throttled', retryAfterS: wait };
    if (!timingSafeEqual(digest(token), this.#token)) {
      this.#throttle.failed(client);
      return { kind: 'wrong' };
    }
    this.#prune();
    const session = randomBytes(32).toString('base64url');
    const at = this.now();
    this.#sessions.set(key(session), { createdAt: at, seenAt: at });
    return { kind: 'ok', session };
  }

  signedIn(c: Context): boolean {
    const cookie = this.#token ? getCookie(c, SESSION_COOKIE) : undefined;
    if (!cookie) return false;
    const k = key(cookie);
    const s = this.#sessions.get(k);
    if (!s) return false;
    const at = this.now();
    if (this.#expired(s, at)) {
      this.#sessions.delete(k);
      return false;
    }
    // Re-inserted, so the map's first entry is always the least recently used.
    this.#sessions.delete(k);
    this.#sessions.set(k, { ...s, seenAt: at });
    return true;
  }

  /** Ends the request's session: the cookie stops working wherever it was copied. */
  signOut(c: Context): void {
    const cookie = getCookie(c, SESSION_COOKIE);
    if (cookie) this.#sessions.delete(key(cookie));
  }

  get cookie(): CookieOptions {
    return {
      httpOnly: true,
      sameSite: 'Strict',
      path: '/',
      secure: this.options.secure,
      maxAge: Math.floor(this.options.maxAgeMs / 1000),
    };
  }

  /** Refuses anything but reading unless signed in: acting on jobs is acting on Redis. */
  guardWrites(): MiddlewareHandler {
    return async (c, next) => {
      if (c.req.method === 'GET' || c.req.method === 'HEAD' || this.signedIn(c)) return next();
      return c.json(
        { error: this.enabled ? 'sign in at /signin to act on jobs' : 'read-only: WFS_DASHBOARD_TOKEN is not set' },
        403,
      );
    };
  }

  #expired(s: Session, at: number): boolean {
    return at - s.seenAt >= this.options.idleMs || at - s.createdAt >= this.options.maxAgeMs;
  }

  #prune(): void {
    const at = this.now();
    for (const [k, s] of this.#sessions) if (this.#expired(s, at)) this.#sessions.delete(k);
    while (this.#sessions.size >= MAX_SESSIONS) this.#sessions.delete(this.#sessions.keys().next().value!);
  }
}

/** Failed sign-ins allowed per client address, and from everyone together, in each window. */
export const SIGN_IN_LIMITS = { perClient: 10, overall: 100, windowMs: 15 * 60_000, clients: 10_000 };

/**
 * Counts failed sign-ins per client address and overall in fixed windows; past either limit every sign-in from
 * that client (or from anyone) waits for the window to end, right token or not, so guessing stays slow. The
 * addresses kept are bounded: past the bound, new addresses share one count.
 */
export class SignInThrottle {
  readonly #clients = new Map<string, { failures: number; resetAt: number }>();
  #overall = { failures: 0, resetAt: 0 };

  constructor(readonly now: () => number = Date.now) {}

  retryAfterS(client: string): number {
    const at = this.now();
    const c = this.#clients.get(this.#keyOf(client));
    const until = Math.max(
      c && c.resetAt > at && c.failures >= SIGN_IN_LIMITS.perClient ? c.resetAt : 0,
      this.#overall.resetAt > at && this.#overall.failures >= SIGN_IN_LIMITS.overall ? this.#overall.resetAt : 0,
    );
    return until > at ? Math.ceil((until - at) / 1000) : 0;
  }

  failed(client: string): void {
    const at = this.now();
    if (this.#overall.resetAt <= at) this.#overall = { failures: 0, resetAt: at + SIGN_IN_LIMITS.windowMs };
    this.#overall.failures++;
    const k = this.#keyOf(client);
    const c = this.#clients.get(k);
    if (!c || c.resetAt <= at) this.#clients.set(k, { failures: 1, resetAt: at + SIGN_IN_LIMITS.windowMs });
    else c.failures++;
  }

  #keyOf(client: string): string {
    if (this.#clients.has(client) || this.#clients.size < SIGN_IN_LIMITS.clients) return client;
    const at = this.now();
    for (const [k, c] of this.#clients) if (c.resetAt <= at) this.#clients.delete(k);
    return this.#clients.size < SIGN_IN_LIMITS.clients ? client : 'many clients';
  }
}

/** The token compared as a fixed-length digest, so its length is not timed either. */
function digest(token: string): Buffer {
  return createHmac('sha256', 'wfsync dashboard token').update(token).digest();
}

/** Sessions are kept by a hash of their id: the memory holds nothing a cookie could be made from. */
function key(session: string): string {
  return createHash('sha256').update(session).digest('base64url');
}
