import { createHmac } from 'node:crypto';
import type { Warehouse } from '../warehouse/connection.ts';
import type { Webhook } from './options.ts';
import { dueNotifications, markNotified, statusOf, type PushStatus } from './outbox.ts';

/**
 * Each change's final state goes to the webhook as its status JSON, signed with an HMAC-SHA256 of the body, and
 * again with backoff until the receiver answers 2xx. Delivery state lives in the outbox, so a restart loses none.
 */

/** How long a receiver may take to answer one delivery. */
const DELIVERY_TIMEOUT_MS = 10_000;

/** Delivers the final states that are due, one at a time. */
export async function notifyWebhook(wh: Warehouse, webhook: Webhook): Promise<void> {
  for (const r of await dueNotifications(wh.sql, wh)) {
    await markNotified(wh.sql, wh, r, await deliver(webhook, statusOf(r)));
  }
}

/** The `X-Signature` header of a body: `sha256=` and the hex HMAC-SHA256 under the token. */
function signatureOf(body: string, token: string): string {
  return `sha256=${createHmac('sha256', token).update(body).digest('hex')}`;
}

/** POSTs one status; true when the receiver answered 2xx. */
async function deliver(webhook: Webhook, status: PushStatus): Promise<boolean> {
  const body = JSON.stringify(status);
  try {
    const res = await fetch(webhook.url, {
      method: 'POST',
      headers: { 'content-type': 'application/json', 'x-signature': signatureOf(body, webhook.token) },
      body,
      signal: AbortSignal.timeout(DELIVERY_TIMEOUT_MS),
    });
    await res.body?.cancel();
    return res.ok;
  } catch {
    return false;
  }
}
