import { createHmac, timingSafeEqual } from 'node:crypto';
import type { Context, MiddlewareHandler } from 'hono';
import { getCookie } from 'hono/cookie';
import type { CookieOptions } from 'hono/utils/cookie';
import { DEFAULTS } from '../config.ts';
import { tokenActor } from '../warehouse/audit.ts';
import type { Warehouse } from '../warehouse/connection.ts';
import { endSession, readSession, startSession, type Session } from '../warehouse/sessions.ts';

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

export type SignIn =
  | { kind: 'ok'; session: string }
  | { kind: 'wrong' }
  | { kind: 'off' }
  | { kind: 'throttled'; retryAfterS: number };

/** Who is signed in on a request: their actor and role. */
export type Operator = Session;

// On the context, not its request: a body limit replaces the request of a body sent without a length.
declare module 'hono' {
  interface ContextVariableMap {
    operator: Operator | undefined;
  }
}

/**
 * Dashboard sign-in and sessions. Signing in (with WFS_DASHBOARD_TOKEN, as the one admin `token:dashboard`, or
 * through the identity provider: ./oidc.ts) starts a session of its own, kept in the warehouse (sessions.ts)
 * with its actor and role; signing out ends it everywhere, as do idle time and the absolute cap. Without a token
 * or an identity provider nobody signs in and the dashboard stays read-only.
 */
export class DashboardAuth {
  readonly #token?: Buffer;
  readonly #throttle: SignInThrottle;

  constructor(
    readonly warehouse: Warehouse,
    token: string | undefined,
    readonly options: SessionOptions = DEFAULT_SESSIONS,
    readonly now: () => number = Date.now,
  ) {
    this.#token = token ? digest(token) : undefined;
    this.#throttle = new SignInThrottle(now);
  }

  /** The dashboard token signs in (no identity provider took its place). */
  get tokenSignIn(): boolean {
    return this.#token !== undefined;
  }

  /** A new admin session for the right token from a client not throttled for failing too often. */
  async signIn(token: string, client: string): Promise<SignIn> {
    if (!this.#token) return { kind: 'off' };
    const wait = this.#throttle.retryAfterS(client);
    if (wait > 0) return { kind: 'throttled', retryAfterS: wait };
    if (!timingSafeEqual(digest(token), this.#token)) {
      this.#throttle.failed(client);
      return { kind: 'wrong' };
    }
    return { kind: 'ok', session: await this.start({ actor: tokenActor('dashboard'), role: 'admin' }) };
  }

  /** A session for someone the identity provider signed in. */
  start(who: Operator): Promise<string> {
    return startSession(this.warehouse, who, this.options, this.now());
  }

  /** Reads the request's session once; `operatorOf` answers it for the rest of the request. */
  resolve(): MiddlewareHandler {
    return async (c, next) => {
      const cookie = getCookie(c, SESSION_COOKIE);
      const who = cookie ? await readSession(this.warehouse, cookie, this.options, this.now()) : undefined;
      if (who) c.set('operator', who);
      return next();
    };
  }

  /** Ends the request's session: the cookie stops working wherever it was copied, on every server. */
  async signOut(c: Context): Promise<Operator | undefined> {
    const cookie = getCookie(c, SESSION_COOKIE);
    return cookie ? endSession(this.warehouse, cookie) : undefined;
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
}

/** The operator signed in on this request (after DashboardAuth.resolve), if any. */
export const operatorOf = (c: Context): Operator | undefined => c.get('operator');

/** Failed sign-ins allowed per client address, and from everyone together, in each period. */
export const SIGN_IN_LIMITS = { perClient: 10, overall: 100, periodMs: 15 * 60_000, clients: 10_000 };

/**
 * Counts failed sign-ins per client address and overall in fixed periods; past either limit every sign-in from
 * that client (or from anyone) waits for the period to end, right token or not, so guessing stays slow. The
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
    if (this.#overall.resetAt <= at) this.#overall = { failures: 0, resetAt: at + SIGN_IN_LIMITS.periodMs };
    this.#overall.failures++;
    const k = this.#keyOf(client);
    const c = this.#clients.get(k);
    if (!c || c.resetAt <= at) this.#clients.set(k, { failures: 1, resetAt: at + SIGN_IN_LIMITS.periodMs });
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
