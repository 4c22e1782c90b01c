import { createHash } from 'node:crypto';
import * as client from 'openid-client';
import type { OidcConfig } from '../config.ts';
import type { Warehouse } from '../warehouse/connection.ts';
import type { SessionRole } from '../warehouse/sessions.ts';
import type { Operator } from './auth.ts';

/**
 * Sign-in through the organization's identity provider (OpenID Connect, authorization code with PKCE, state and
 * nonce), with openid-client doing every check of the ID token (issuer, audience, signature against the issuer's
 * keys, expiry, nonce). A sign-in under way is a row of `sign_ins` keyed by a hash of its state, so the callback
 * may reach any replica and a replayed callback finds nothing. The role comes from the groups claim.
 */

/** How long a sign-in may take at the identity provider. */
const SIGN_IN_TTL = '10 minutes';

export type Finished = { ok: true; who: Operator } | { ok: false; reason: string; actor?: string };

const isLoopbackUrl = (url: string) => {
  const host = new URL(url).hostname.replace(/^\[|\]$/g, '');
  return host === 'localhost' || host === '::1' || /^127\.\d+\.\d+\.\d+$/.test(host);
};

const hashOf = (state: string) => createHash('sha256').update(state).digest('base64url');

export class OidcSignIn {
  #config?: Promise<client.Configuration>;

  constructor(
    readonly settings: OidcConfig,
    readonly warehouse: Warehouse,
  ) {}

  get callbackUrl(): string {
    return `${this.settings.publicUrl}/signin/callback`;
  }

  /** The issuer's metadata, read once; an issuer that did not answer is asked again at the next sign-in. */
  #discovered(): Promise<client.Configuration> {
    const s = this.settings;
    // Plain HTTP only to an issuer on this machine (a test or a local Keycloak); anything else needs HTTPS.
    const execute = isLoopbackUrl(s.issuer) ? [client.allowInsecureRequests] : [];
    this.#config ??= client
      .discovery(new URL(s.issuer), s.clientId, { client_secret: s.clientSecret }, undefined, { execute, timeout: 10 })
      .catch((err: unknown) => {
        this.#config = undefined;
        throw err;
      });
    return this.#config;
  }

  /** Where to send the browser, and the state its cookie binds the sign-in to. */
  async begin(): Promise<{ url: URL; state: string }> {
    const config = await this.#discovered();
    const verifier = client.randomPKCECodeVerifier();
    const state = client.randomState();
    const nonce = client.randomNonce();
    const t = this.warehouse.sql`${this.warehouse.sql(this.warehouse.schema)}.sign_ins`;
    await this.warehouse.sql`delete from ${t} where started_at < now() - ${SIGN_IN_TTL}::interval`;
    await this.warehouse
      .sql`insert into ${t} (state_hash, nonce, code_verifier) values (${hashOf(state)}, ${nonce}, ${verifier})`;
    const url = client.buildAuthorizationUrl(config, {
      redirect_uri: this.callbackUrl,
      scope: 'openid email profile',
      code_challenge: await client.calculatePKCECodeChallenge(verifier),
      code_challenge_method: 'S256',
      state,
      nonce,
    });
    return { url, state };
  }

  /** The callback: the sign-in it answers (used up), the code redeemed and the ID token checked, the role found. */
  async finish(callback: URL, stateCookie: string | undefined): Promise<Finished> {
    const state = callback.searchParams.get('state') ?? '';
    if (!state || state !== stateCookie) return { ok: false, reason: 'the state is not the one this browser sent' };
    const t = this.warehouse.sql`${this.warehouse.sql(this.warehouse.schema)}.sign_ins`;
    const [pending] = await this.warehouse.sql<{ nonce: string; code_verifier: string }[]>`
      delete from ${t} where state_hash = ${hashOf(state)} and started_at > now() - ${SIGN_IN_TTL}::interval
      returning nonce, code_verifier`;
    if (!pending) return { ok: false, reason: 'no sign-in under way for this state (used, expired or forged)' };
    const error = callback.searchParams.get('error');
    if (error) return { ok: false, reason: `the identity provider answered ${error.slice(0, 100)}` };
    let claims: Record<string, unknown>;
    try {
      const tokens = await client.authorizationCodeGrant(await this.#discovered(), callback, {
        pkceCodeVerifier: pending.code_verifier,
        expectedState: state,
        expectedNonce: pending.nonce,
        idTokenExpected: true,
      });
      claims = { ...tokens.claims() };
    } catch (err) {
      return { ok: false, reason: `the ID token or code was refused: ${(err as Error).message.slice(0, 200)}` };
    }
    return this.#operator(claims);
  }

  #operator(claims: Record<string, unknown>): Finished {
    const email = typeof claims.email === 'string' && claims.email_verified !== false ? claims.email : undefined;
    const actor = `oidc:${email ?? String(claims.sub)}`;
    const role = roleOf(this.settings, groupsOf(claims[this.settings.roleClaim]));
    if (!role)
      return { ok: false, actor, reason: 'not in a group of WFS_OIDC_VIEWERS, WFS_OIDC_OPERATORS or WFS_OIDC_ADMINS' };
    return { ok: true, who: { actor, role } };
  }
}

/** A groups claim as a list: an array of names, or one name. */
function groupsOf(claim: unknown): string[] {
  if (Array.isArray(claim)) return claim.filter((g): g is string => typeof g === 'string');
  return typeof claim === 'string' ? [claim] : [];
}

/** The highest role the groups give; nobody when viewers are listed and none of the groups is one. */
export function roleOf(
  s: Pick<OidcConfig, 'admins' | 'operators' | 'viewers'>,
  groups: string[],
): SessionRole | undefined {
  const any = (list: readonly string[] | undefined) => !!list && groups.some((g) => list.includes(g));
  if (any(s.admins)) return 'admin';
  if (any(s.operators)) return 'operator';
  if (s.viewers && s.viewers.length > 0 && !any(s.viewers)) return undefined;
  return 'viewer';
}
