import { timingSafeEqual } from 'node:crypto';
import type { Context, MiddlewareHandler } from 'hono';
import { findToken, type TokenScope } from '../warehouse/api-tokens.ts';
import { tokenActor, type Actor } from '../warehouse/audit.ts';
import type { Warehouse } from '../warehouse/connection.ts';

/**
 * The bearer tokens of the push API and the JSON routes: WFS_PUSH_TOKEN, as the token named `env` with every
 * scope, or a named token (`wfsync tokens`), looked up at each request so a revoked one is refused at once.
 * A route names the scope it needs; a token limited to companies acts on those only.
 */

export interface Caller {
  actor: Actor;
  scopes: readonly TokenScope[];
  /** Empty: every company. */
  companies: readonly string[];
}

export interface BearerOptions {
  warehouse: Warehouse;
  /** WFS_PUSH_TOKEN. */
  envToken?: string;
}

// On the context, not its request: a body limit replaces the request of a body sent without a length.
declare module 'hono' {
  interface ContextVariableMap {
    caller: Caller;
  }
}

/** The caller a bearer check let through; the routes behind one always have it. */
export function callerOf(c: Context): Caller {
  const caller = c.get('caller') as Caller | undefined;
  if (!caller) throw new Error('callerOf: no bearer check ran for this route');
  return caller;
}

/** Whether the caller may act on (or read) the company. */
export const mayActFor = (caller: Caller, company: string) =>
  caller.companies.length === 0 || caller.companies.includes(company);

function sameToken(given: string, expected: string): boolean {
  const a = Buffer.from(given);
  const b = Buffer.from(expected);
  return a.length === b.length && timingSafeEqual(a, b);
}

const ENV: Caller = { actor: tokenActor('env'), scopes: ['push', 'read', 'admin'], companies: [] };

/** Who the request's bearer token is, if it is one. */
export async function callerFor(o: BearerOptions, header: string | undefined): Promise<Caller | undefined> {
  const given = header?.startsWith('Bearer ') ? header.slice(7).trim() : '';
  if (!given || given.length > 512) return undefined;
  if (o.envToken && sameToken(given, o.envToken)) return ENV;
  const token = await findToken(o.warehouse, given);
  return token && { actor: tokenActor(token.name), scopes: token.scopes, companies: token.companies };
}

/** Lets a request through with a token of the scope (which may depend on the request); 401 or 403 naming why. */
export function bearer(o: BearerOptions, scope: TokenScope | ((c: Context) => TokenScope)): MiddlewareHandler {
  return async (c, next) => {
    const caller = await callerFor(o, c.req.header('authorization'));
    if (!caller)
      return c.json(
        { error: 'wrong or missing bearer token: make one with wfsync tokens create, or set WFS_PUSH_TOKEN' },
        401,
      );
    const needs = typeof scope === 'function' ? scope(c) : scope;
    if (!caller.scopes.includes(needs))
      return c.json({ error: `token: its scopes (${caller.scopes.join(', ')}) do not include ${needs}` }, 403);
    c.set('caller', caller);
    return next();
  };
}

/** The 403 of a token that may not act on the company. */
export const notForCompany = (c: Context, company: string) =>
  c.json({ error: `company: this token may not act on company "${company.slice(0, 40)}"` }, 403);
