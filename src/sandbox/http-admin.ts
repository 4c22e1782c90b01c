import type { IncomingMessage, ServerResponse } from 'node:http';
import { formatRateLimit, type RateLimit } from '../config.ts';
import type { Endpoint } from '../source/endpoints.ts';
import { endpoints, type EndpointName } from '../resources/index.ts';
import { FaultSpecSchema, type FaultInjector } from './faults.ts';
import type { SandboxStats } from './http.ts';
import { lowerCaseParams, parseQuery } from './http-query.ts';
import type { KeyRing } from './keys.ts';
import type { SandboxData } from './service.ts';

/**
 * Routes for tests and benches under `/_sandbox/`, apart from the spec's paths: no API key, no rate limit,
 * always JSON. The server binds to 127.0.0.1 by default, so they are not reachable from elsewhere.
 */

export const ADMIN_PREFIX = '/_sandbox/';

export interface AdminDeps {
  data: SandboxData;
  faults: FaultInjector;
  rateLimit: RateLimit | null;
  stats: () => SandboxStats;
  keys: KeyRing;
}

type Answer = [status: number, body: unknown];

function readJson(req: IncomingMessage): Promise<unknown> {
  return new Promise((resolve, reject) => {
    const chunks: Buffer[] = [];
    req.on('data', (c: Buffer) => chunks.push(c));
    req.on('end', () => {
      try {
        const text = Buffer.concat(chunks).toString('utf8');
        resolve(text.trim() === '' ? {} : JSON.parse(text));
      } catch (e) {
        reject(e);
      }
    });
    req.on('error', reject);
  });
}

const notFound = (what: string): Answer => [404, { error: 'not_found', error_message: what }];
const invalid = (message: string): Answer => [400, { error: 'invalid_parameters', error_message: message }];

function truth(data: SandboxData, name: string, search: string): Answer {
  if (!Object.hasOwn(endpoints, name)) return notFound(`no endpoint named "${name}"`);
  const endpoint: Endpoint = endpoints[name as EndpointName];
  const params = lowerCaseParams(new URLSearchParams(search));
  const parsed = parseQuery(endpoint, params, false);
  if (!parsed.ok) return invalid(parsed.bad.message);
  return [200, data.truth(name as EndpointName, params.size > 0 ? parsed.query : undefined)];
}

function advance(data: SandboxData, search: string): Answer {
  const hours = Number(new URLSearchParams(search).get('hours'));
  if (!Number.isFinite(hours) || hours <= 0) return invalid('hours must be a positive number');
  return [200, data.advance(hours)];
}

async function setFaults(deps: AdminDeps, req: IncomingMessage): Promise<Answer> {
  let body: unknown;
  try {
    body = await readJson(req);
  } catch (e) {
    return [400, { error: 'invalid_request', error_message: `not valid JSON: ${(e as Error).message}` }];
  }
  const spec = FaultSpecSchema.safeParse(body);
  if (!spec.success) {
    const issue = spec.error.issues[0]!;
    return invalid(`${issue.path.join('.') || 'faults'}: ${issue.message}`);
  }
  deps.faults.set(spec.data);
  return [200, deps.faults.spec];
}

async function answer(deps: AdminDeps, req: IncomingMessage, route: string, search: string): Promise<Answer> {
  const { data } = deps;
  const method = req.method ?? 'GET';
  if (method === 'GET' && route === 'now') return [200, { now: data.now().toISOString() }];
  if (method === 'GET' && route === 'stats') return [200, deps.stats()];
  if (method === 'GET' && route === 'info') {
    return [
      200,
      {
        companyId: data.companyId(),
        formIds: data.formIds(),
        runTypeIds: data.runTypeIds(),
        now: data.now().toISOString(),
        rateLimit: deps.rateLimit ? formatRateLimit(deps.rateLimit) : null,
      },
    ];
  }
  if (method === 'GET' && route.startsWith('truth/')) return truth(data, route.slice('truth/'.length), search);
  if (method === 'POST' && route === 'advance') return advance(data, search);
  if (method === 'GET' && route === 'faults') return [200, deps.faults.spec];
  if (method === 'POST' && route === 'faults') return setFaults(deps, req);
  // A rotation's old key revoked, to prove a client moved to the new one: every later request with it is a 401.
  if (method === 'POST' && route === 'keys/revoke') {
    const key = new URLSearchParams(search).get('key') ?? '';
    return deps.keys.revoke(key) ? [200, { revoked: deps.keys.refusedSinceRevoked() }] : notFound('no such API key');
  }
  if (method === 'GET' && route === 'keys/revoked') return [200, { revoked: deps.keys.refusedSinceRevoked() }];
  return notFound(`no sandbox route ${method} ${ADMIN_PREFIX}${route}`);
}

export function createAdmin(deps: AdminDeps) {
  return (req: IncomingMessage, res: ServerResponse, rawPath: string, search: string): void => {
    const route = rawPath.slice(ADMIN_PREFIX.length).replace(/\/+$/, '');
    answer(deps, req, route, search)
      .catch((err: unknown): Answer => [500, { error: 'internal_server_error', error_message: (err as Error).message }])
      .then(([status, body]) => {
        const text = JSON.stringify(body);
        res.writeHead(status, {
          'content-type': 'application/json; charset=utf-8',
          'content-length': Buffer.byteLength(text),
        });
        res.end(text);
      });
  };
}
