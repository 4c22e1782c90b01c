import type { Context, Hono } from 'hono';
import { deleteCookie, setCookie } from 'hono/cookie';
import type { Logger } from 'pino';
import { recordAudit, tokenActor } from '../warehouse/audit.ts';
import type { Warehouse } from '../warehouse/connection.ts';
import { SESSION_COOKIE, type DashboardAuth, type Operator } from './auth.ts';
import { clientOf, FORM_EXPECTED, readForm } from './input.ts';
import { signInPage, type Viewer } from './page.ts';

/**
 * Signing in and out of the dashboard: with the dashboard token (a form), and signing out. Each sign-in, refused
 * sign-in and sign-out is audited; a refused one names no secret.
 */

export interface SignInRoutesOptions {
  auth: DashboardAuth;
  warehouse: Warehouse;
  log: Logger;
  viewer: (c: Context) => Viewer;
}

/** The session's cookie, and the audit's row, for someone just signed in. */
export async function signedIn(c: Context, o: SignInRoutesOptions, who: Operator, session: string): Promise<void> {
  setCookie(c, SESSION_COOKIE, session, o.auth.cookie);
  await recordAudit(o.warehouse, { actor: who.actor, action: 'sign-in', target: `role ${who.role}`, outcome: 'done' });
  o.log.info({ actor: who.actor, role: who.role, client: clientOf(c) }, 'dashboard sign-in');
}

export function mountTokenSignIn(app: Hono, o: SignInRoutesOptions): void {
  app.get('/signin', (c) => c.html(signInPage(o.viewer(c))));
  app.post('/signin', async (c) => {
    const form = await readForm(c);
    if (!form) return c.json({ error: FORM_EXPECTED }, 400);
    const client = clientOf(c);
    const tried = await o.auth.signIn(typeof form.token === 'string' ? form.token : '', client);
    if (tried.kind === 'throttled') {
      c.header('retry-after', String(tried.retryAfterS));
      return c.html(signInPage(o.viewer(c), `Too many failed sign-ins: try again in ${tried.retryAfterS} s.`), 429);
    }
    if (tried.kind !== 'ok') {
      if (tried.kind === 'wrong') {
        o.log.warn({ client }, 'dashboard sign-in with a wrong token');
        const refused = { actor: tokenActor('dashboard'), action: 'sign-in', outcome: 'refused' } as const;
        await recordAudit(o.warehouse, { ...refused, reason: 'not the dashboard token' });
      }
      const said = o.auth.tokenSignIn ? 'That is not the dashboard token.' : undefined;
      return c.html(signInPage(o.viewer(c), said), 403);
    }
    await signedIn(c, o, { actor: tokenActor('dashboard'), role: 'admin' }, tried.session);
    return c.redirect('/', 303);
  });
}

export function mountSignOut(app: Hono, o: SignInRoutesOptions): void {
  app.post('/signout', async (c) => {
    const ended = await o.auth.signOut(c);
    deleteCookie(c, SESSION_COOKIE, { path: '/', secure: o.auth.cookie.secure });
    if (ended) await recordAudit(o.warehouse, { actor: ended.actor, action: 'sign-out', outcome: 'done' });
    return c.redirect('/', 303);
  });
}
