import type { IncomingHttpHeaders } from 'node:http';
import type { ServiceFeedback } from '../ratelimit/types.ts';

/** What a response's `X-RateLimit-*` headers tell the limiter about the key's budget. */

/** Epoch ms of `X-RateLimit-Reset`. The spec says unix seconds (possibly fractional); a small value is read as seconds from now. */
function resetAt(value: number, now: number): number {
  return value < 1e9 ? now + value * 1000 : value * 1000;
}

export function headerNumber(headers: IncomingHttpHeaders, name: string): number | undefined {
  const raw = headers[name];
  const text = Array.isArray(raw) ? raw[0] : raw;
  if (text === undefined || text.trim() === '') return undefined;
  const n = Number(text);
  return Number.isFinite(n) ? n : undefined;
}

/** What a response's rate-limit headers say; `limited` is set once the status is known to mean it. */
export function feedbackOf(res: { headers: IncomingHttpHeaders }): ServiceFeedback {
  const remaining = headerNumber(res.headers, 'x-ratelimit-remaining');
  const reset = headerNumber(res.headers, 'x-ratelimit-reset');
  const fb: ServiceFeedback = {};
  if (remaining !== undefined) fb.remaining = remaining;
  if (reset !== undefined) fb.resetAtMs = resetAt(reset, Date.now());
  return fb;
}
