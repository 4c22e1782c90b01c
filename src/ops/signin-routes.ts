import type { Context, Hono } from 'hono';
import { deleteCookie, getCookie, setCookie } from 'hono/cookie';
import type { Logger } from 'pino';
import { recordAudit, tokenActor } from '../warehouse/audit.ts';
import type { Warehouse } from '../warehouse/connection.ts';
import { SESSION_COOKIE, type DashboardAuth, type Operator } from './auth.ts';
import { clientOf, FORM_EXPECTED, readForm } from './input.ts';
import { esc, layout, signInPage, type Viewer } from './page.ts';
import type { OidcSignIn } from './oidc.ts';

/** Binds a sign-in at the identity provider to the browser that began it; sent back on the callback only. */
const SIGN_IN_COOKIE = 'wfsync_signin';

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

/**
 * Sign-in through the identity provider: `/signin` sends the browser there; `/signin/callback` checks what comes
 * back. The session cookie is SameSite=Strict, which a browser does not send on the redirect chain that began at
 * the provider's site: the callback answers a page that goes on to the overview, a navigation of this site.
 */
export function mountOidcSignIn(app: Hono, o: SignInRoutesOptions & { oidc: OidcSignIn }): void {
  app.get('/signin', async (c) => {
    let begun: Awaited<ReturnType<OidcSignIn['begin']>>;
    try {
      begun = await o.oidc.begin();
    } catch (err) {
      o.log.error({ err }, 'the identity provider does not answer');
      return c.html(signInPage(o.viewer(c), 'The identity provider does not answer: try again shortly.'), 503);
    }
    setCookie(c, SIGN_IN_COOKIE, begun.state, {
      httpOnly: true,
      sameSite: 'Lax',
      path: '/signin/callback',
      secure: o.auth.cookie.secure,
      maxAge: 600,
    });
    return c.redirect(begun.url.href, 302);
  });
  app.get('/signin/callback', async (c) => {
    const callback = new URL(o.oidc.callbackUrl);
    callback.search = new URL(c.req.url).search;
    const finished = await o.oidc.finish(callback, getCookie(c, SIGN_IN_COOKIE));
    deleteCookie(c, SIGN_IN_COOKIE, { path: '/signin/callback', secure: o.auth.cookie.secure });
    if (!finished.ok) {
      const refused = { actor: finished.actor ?? 'oidc:unknown', action: 'sign-in', outcome: 'refused' } as const;
      await recordAudit(o.warehouse, { ...refused, reason: finished.reason });
      o.log.warn({ client: clientOf(c), reason: finished.reason, actor: finished.actor }, 'sign-in refused');
      return c.html(signInPage(o.viewer(c), `Sign-in refused: ${finished.reason}.`), 403);
    }
    await signedIn(c, o, finished.who, await o.auth.start(finished.who));
    return c.html(
      layout(
        'signed in',
        o.viewer(c),
        `<meta http-equiv="refresh" content="0;url=/"><p id="signed-in-as">Signed in as ${esc(finished.who.actor)} (${esc(finished.who.role)}). <a href="/">Go on</a>.</p>`,
      ),
    );
  });
}
