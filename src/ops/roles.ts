import type { MiddlewareHandler } from 'hono';
import type { SessionRole } from '../warehouse/sessions.ts';
import { operatorOf } from './auth.ts';
import { holds } from './page.ts';

/**
 * What each role may do on the dashboard. A viewer reads every page (no raw payloads, no actions); an operator
 * also runs and re-syncs streams, pauses and resumes companies, retries pushes, runs, pauses and resumes push
 * models and acts on queued jobs; an admin does everything (companies added, removed and re-keyed, personal
 * data, erasures, push models added and removed). Every action is checked here, on the server; the pages only
 * leave out what the role may not do.
 */

export type Role = SessionRole;

/** The actions an operator may take; every other action needs an admin. */
const OPERATOR_ACTIONS: readonly RegExp[] = [
  /^\/actions\/run$/,
  /^\/actions\/retry-push$/,
  /^\/actions\/push-models\/[^/]+\/(run|pause|resume)$/,
  /^\/actions\/companies\/[^/]+\/(pause|resume)$/,
  /^\/actions\/companies\/[^/]+\/streams\/[^/]+\/resync$/,
  /^\/queues\//,
];

/** The role a request that changes something needs. */
export const roleFor = (path: string): Role => (OPERATOR_ACTIONS.some((r) => r.test(path)) ? 'operator' : 'admin');

/** Refuses anything but reading to whoever lacks the role the action needs: 403, saying why. */
export function guardActions(canSignIn: () => boolean): MiddlewareHandler {
  return async (c, next) => {
    if (c.req.method === 'GET' || c.req.method === 'HEAD') return next();
    const who = operatorOf(c);
    const needs = roleFor(c.req.path);
    if (who && holds({ signedIn: true, canSignIn: true, role: who.role }, needs)) return next();
    const error = who
      ? `role: ${who.actor} is ${who.role === 'viewer' ? 'a' : 'an'} ${who.role}; this needs an ${needs}`
      : canSignIn()
        ? `sign in at /signin: this needs an ${needs}`
        : 'read-only: neither WFS_DASHBOARD_TOKEN nor WFS_OIDC_ISSUER is set';
    return c.json({ error }, 403);
  };
}
