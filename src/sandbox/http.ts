import type { IncomingMessage, OutgoingHttpHeaders, ServerResponse } from 'node:http';
import type { Logger } from '../log.ts';
import { API_VERSION, AUTH_HEADER, type Endpoint } from '../source/endpoints.ts';
import { endpointByPath, type EndpointName } from '../resources/index.ts';
import type { FaultInjector, FaultKind, FaultPlan } from './faults.ts';
import { EVERYTHING, parseQuery, lowerCaseParams } from './http-query.ts';
import {
  CONTENT_TYPE,
  Codecs,
  negotiate,
  renderRead,
  renderValue,
  splitSuffix,
  type Format,
  type Quirk,
} from './http-wire.ts';
import type { KeyRing } from './keys.ts';
import { resetHeader, type FixedWindowLimiter, type BudgetVerdict } from './ratelimit.ts';
import type { SandboxRefusal, SandboxData, WriteStats } from './service.ts';

/**
 * The service's HTTP interface over a SandboxData: auth and scopes, the per-key limit, formats, versions,
 * query validation by the catalog, paging envelopes, errors in both of the spec's body shapes, and faults.
 */

export interface KeyStats {
  requests: number;
  rateLimited: number;
}

export interface SandboxStats {
  /** API requests that reached the sandbox (admin routes excluded), with or without a valid key. */
  requests: number;
  /** 429s answered, from the budget or from a storm. */
  rateLimited: number;
  byKey: Record<string, KeyStats>;
  /** Requests to an endpoint of the catalog that passed the key and budget checks, by endpoint name (faulted ones too). */
  byEndpoint: Partial<Record<EndpointName, number>>;
  /** Requests each fault was applied to. */
  faults: Record<FaultKind, number>;
  /** Writes the data applied, per write endpoint, and verification results skipped as resent RequestIds. */
  writes: WriteStats;
}

export interface ApiDeps {
  data: SandboxData;
  keys: KeyRing;
  limiter: FixedWindowLimiter | null;
  faults: FaultInjector;
  latencyMs: number;
  log: Logger;
  quirks?: ReadonlySet<Quirk>;
}

interface Ctx {
  res: ServerResponse;
  format: Format;
  rate?: BudgetVerdict;
  plan?: FaultPlan;
}

const MAX_BODY_BYTES = 16 * 1024 * 1024;
const AUTH = AUTH_HEADER.toLowerCase();

class BadBody extends Error {}

function readBody(req: IncomingMessage): Promise<Buffer> {
  return new Promise((resolve, reject) => {
    const chunks: Buffer[] = [];
    let size = 0;
    req.on('data', (chunk: Buffer) => {
      size += chunk.length;
      if (size > MAX_BODY_BYTES) {
        reject(new BadBody(`request body larger than ${MAX_BODY_BYTES} bytes`));
        req.destroy();
      } else {
        chunks.push(chunk);
      }
    });
    req.on('end', () => resolve(Buffer.concat(chunks)));
    req.on('error', reject);
  });
}

function parseJson(raw: Buffer): unknown {
  const text = raw.toString('utf8');
  if (text.trim() === '') throw new BadBody('the request body is empty; expected JSON');
  try {
    return JSON.parse(text);
  } catch (e) {
    throw new BadBody(`the request body is not valid JSON: ${(e as Error).message}`);
  }
}

/**
 * `{Message, Errors: {Error, <field>...}}` for a write's validation messages; `{error, error_message}` for
 * everything else, reads' parameter refusals included (service-spec.md, "Errors", body shapes).
 */
function refusalBody(r: SandboxRefusal, write: boolean): unknown {
  if (!write || !r.fields || Object.keys(r.fields).length === 0) return { error: r.code, error_message: r.message };
  const summary = Object.values(r.fields).join('; ');
  return { Message: r.message, Errors: { Error: summary, ...r.fields } };
}

function decodePath(raw: string): string | undefined {
  try {
    return decodeURIComponent(raw);
  } catch {
    return undefined;
  }
}

export class SandboxApi {
  readonly #deps: ApiDeps;
  readonly #codecs: Codecs;
  readonly #routes = new Map<string, Endpoint | null>();
  readonly #stats: Omit<SandboxStats, 'writes'>;

  constructor(deps: ApiDeps) {
    this.#deps = deps;
    this.#codecs = new Codecs(deps.data, deps.quirks);
    this.#stats = {
      requests: 0,
      rateLimited: 0,
      byKey: {},
      byEndpoint: {},
      faults: { error500: 0, reset: 0, lost: 0, truncate: 0, notModified: 0, slow: 0 },
    };
    for (const key of deps.keys.keys()) this.#stats.byKey[key] = { requests: 0, rateLimited: 0 };
  }

  stats(): SandboxStats {
    const byKey = Object.fromEntries(Object.entries(this.#stats.byKey).map(([k, v]) => [k, { ...v }]));
    return {
      requests: this.#stats.requests,
      rateLimited: this.#stats.rateLimited,
      byKey,
      byEndpoint: { ...this.#stats.byEndpoint },
      faults: { ...this.#stats.faults },
      writes: this.#deps.data.writeStats(),
    };
  }

  handle(req: IncomingMessage, res: ServerResponse, rawPath: string, search: string): void {
    const ctx: Ctx = { res, format: 'json' };
    this.#serve(req, ctx, rawPath, search).catch((err: unknown) => this.#crash(ctx, err));
  }

  async #serve(req: IncomingMessage, ctx: Ctx, rawPath: string, search: string): Promise<void> {
    const { keys, faults } = this.#deps;
    this.#stats.requests += 1;
    const decoded = decodePath(rawPath);
    const suffix = decoded === undefined ? undefined : splitSuffix(decoded);
    const format = suffix?.format ?? negotiate(req.headers.accept);
    ctx.format = format ?? 'json';

    const token = req.headers[AUTH];
    if (typeof token !== 'string' || !keys.has(token)) {
      return this.#error(ctx, 401, 'unauthorized', `a valid ${AUTH_HEADER} header is required`);
    }
    const keyStats = this.#stats.byKey[token]!;
    keyStats.requests += 1;
    if (this.#limited(ctx, token, keyStats)) return;
    if (!format) return this.#error(ctx, 406, 'not_acceptable', `unknown response format: ${req.headers.accept}`);

    const endpoint = suffix && this.#route(req.method ?? 'GET', suffix.path);
    if (endpoint) this.#counted(endpoint.name as EndpointName);
    // Writes are the POSTs (the catalog's reads are all GETs).
    ctx.plan = faults.plan(req.method !== 'GET');
    if (ctx.plan.error500) {
      this.#stats.faults.error500 += 1;
      return this.#error(ctx, 500, 'internal_server_error', 'unexpected error while processing');
    }

    if (!endpoint) return this.#error(ctx, 404, 'not_found', `no resource at ${req.method} ${rawPath}`);
    if (!keys.allows(token, endpoint)) {
      return this.#error(ctx, 403, 'insufficient_scope', `the API key lacks the "${endpoint.scope}" scope`);
    }
    const params = lowerCaseParams(new URLSearchParams(search));
    const version = params.get('api-version');
    if (version !== undefined && version !== API_VERSION) {
      return this.#error(ctx, 400, 'invalid_parameters', `api-version must be ${API_VERSION}, got "${version}"`);
    }
    const parsed = parseQuery(endpoint, params);
    if (!parsed.ok) return this.#error(ctx, 400, 'invalid_parameters', parsed.bad.message);
    const earlier = version === undefined;
    if (endpoint.method === 'GET') {
      if (ctx.plan.reset) return this.#drop(ctx);
      return this.#read(ctx, endpoint, parsed, earlier);
    }
    return this.#write(req, ctx, endpoint, earlier);
  }

  #counted(name: EndpointName): void {
    this.#stats.byEndpoint[name] = (this.#stats.byEndpoint[name] ?? 0) + 1;
  }

  /** A reset before the request is processed: nothing is read or written, and no answer is sent. */
  #drop(ctx: Ctx): void {
    this.#stats.faults.reset += 1;
    const delay = this.#deps.latencyMs;
    const drop = () => ctx.res.socket?.destroy();
    if (delay > 0) setTimeout(drop, delay);
    else drop();
  }

  /** Storms and the per-key budget; a 429 is not counted against the budget. */
  #limited(ctx: Ctx, token: string, keyStats: KeyStats): boolean {
    const { limiter, faults } = this.#deps;
    const stormEnd = faults.stormEndsAt();
    if (stormEnd !== undefined) {
      if (limiter) {
        const budget = limiter.peek(token);
        // Come back when the storm ends, or later if the key's budget is spent until then.
        const resetAtMs = budget.remaining > 0 ? stormEnd : Math.max(budget.resetAtMs, stormEnd);
        ctx.rate = { ...budget, allowed: false, remaining: 0, resetAtMs };
      }
    } else if (limiter) {
      ctx.rate = limiter.take(token);
      if (ctx.rate.allowed) return false;
    } else {
      return false;
    }
    keyStats.rateLimited += 1;
    this.#stats.rateLimited += 1;
    this.#error(ctx, 429, 'too_many_requests', 'too many requests in the period; wait for X-RateLimit-Reset');
    return true;
  }

  #route(method: string, path: string): Endpoint | undefined {
    const key = `${method} ${path.toLowerCase()}`;
    let endpoint = this.#routes.get(key);
    if (endpoint === undefined) {
      endpoint = endpointByPath(method, path) ?? null;
      // Unknown paths are not remembered, so a scan of made-up paths cannot grow the map.
      if (endpoint) this.#routes.set(key, endpoint);
    }
    return endpoint ?? undefined;
  }

  #read(
    ctx: Ctx,
    endpoint: Endpoint,
    parsed: Extract<ReturnType<typeof parseQuery>, { ok: true }>,
    earlier: boolean,
  ): void {
    // "Plain arrays are returned by ... the earlier representation of the individual certification list."
    const plain = earlier && endpoint.earlier !== undefined && endpoint.response.kind === 'envelope';
    const page = plain ? EVERYTHING : parsed.page;
    const outcome = this.#deps.data.read(endpoint.name as EndpointName, parsed.query, page);
    if (!outcome.ok) {
      this.#refuse(ctx, outcome.refusal, false);
      return;
    }
    if (endpoint.response.kind === 'one' && outcome.value.items.length === 0) {
      this.#error(ctx, 404, 'not_found', 'no such record');
      return;
    }
    const codec = this.#codecs.for(endpoint, earlier);
    const kind = plain ? 'array' : endpoint.response.kind;
    this.#reply(
      ctx,
      200,
      renderRead(endpoint, outcome.value, page, codec, { format: ctx.format, kind, quirks: this.#deps.quirks }),
    );
  }

  async #write(req: IncomingMessage, ctx: Ctx, endpoint: Endpoint, earlier: boolean): Promise<void> {
    let body: unknown;
    try {
      body = parseJson(await readBody(req));
    } catch (e) {
      if (e instanceof BadBody) {
        this.#error(ctx, 400, 'invalid_request', e.message);
        return;
      }
      throw e;
    }
    if (ctx.plan?.reset) {
      this.#drop(ctx);
      return;
    }
    const outcome = this.#deps.data.write(endpoint.name as EndpointName, body);
    if (!outcome.ok) return this.#refuse(ctx, outcome.refusal, true);
    if (ctx.plan?.notModified) {
      // Applied, and answered as the spec's "304 not_modified (error occurred)": no body.
      this.#stats.faults.notModified += 1;
      return this.#reply(ctx, 304, '');
    }
    const status = endpoint.status ?? 200;
    if (endpoint.response.kind === 'empty') return this.#reply(ctx, status, '');
    const value = outcome.value === null ? null : this.#codecs.for(endpoint, earlier).wire(outcome.value);
    this.#reply(ctx, status, renderValue(value, ctx.format));
  }

  #refuse(ctx: Ctx, refusal: SandboxRefusal, write: boolean): void {
    // 304 carries no body in HTTP; the status is the whole answer.
    if (refusal.status === 304) {
      this.#reply(ctx, 304, '');
      return;
    }
    this.#reply(ctx, refusal.status, renderValue(refusalBody(refusal, write), ctx.format));
  }

  #error(ctx: Ctx, status: number, code: string, message: string): void {
    this.#reply(ctx, status, renderValue({ error: code, error_message: message }, ctx.format));
  }

  #crash(ctx: Ctx, err: unknown): void {
    this.#deps.log.error({ err }, 'sandbox request failed');
    if (ctx.res.headersSent) {
      ctx.res.destroy();
      return;
    }
    this.#reply(
      ctx,
      500,
      renderValue({ error: 'internal_server_error', error_message: 'unexpected error while processing' }, ctx.format),
    );
  }

  #headers(ctx: Ctx, body: Buffer): OutgoingHttpHeaders {
    // The service's clock is the sandbox's: clients set their checkpoints by it, as they would by a real service's.
    const headers: OutgoingHttpHeaders = { 'content-length': body.length, date: this.#deps.data.now().toUTCString() };
    if (body.length > 0) headers['content-type'] = CONTENT_TYPE[ctx.format];
    const rate = ctx.rate ?? this.#deps.limiter?.peek('');
    if (rate) {
      headers['x-ratelimit-limit'] = rate.limit;
      headers['x-ratelimit-remaining'] = rate.remaining;
      headers['x-ratelimit-reset'] = resetHeader(rate.resetAtMs, this.#deps.limiter?.rate.periodMs ?? 1000);
    }
    return headers;
  }

  #reply(ctx: Ctx, status: number, text: Buffer | string): void {
    const body = typeof text === 'string' ? Buffer.from(text) : text;
    const headers = this.#headers(ctx, body);
    const plan = ctx.plan;
    const send = () => {
      const res = ctx.res;
      if (res.destroyed) return;
      if (plan?.lost) {
        this.#stats.faults.lost += 1;
        res.socket?.destroy();
      } else if (plan?.truncate) {
        this.#stats.faults.truncate += 1;
        headers['content-length'] = body.length + 1;
        res.writeHead(status, headers);
        res.write(body.subarray(0, body.length >> 1), () => res.destroy());
      } else {
        res.writeHead(status, headers);
        res.end(body);
      }
    };
    if (plan?.delayMs) this.#stats.faults.slow += 1;
    const delay = this.#deps.latencyMs + (plan?.delayMs ?? 0);
    if (delay > 0) setTimeout(send, delay);
    else send();
  }
}
