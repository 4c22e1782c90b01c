import { Pool } from 'undici';
import { AUTH_HEADER, PAGE_LIMIT_MAX, type Endpoint } from '../src/source/endpoints.ts';
import { endpoints, type EndpointName } from '../src/resources/index.ts';
import { pagePath, reads } from './sandbox-backfill.ts';
import { BENCH_KEY, startSandboxProcess } from './sync-process.ts';

/** A list's pages as the sandbox answered them, to be replayed through the row path. */
export interface Recorded {
  endpoint: Endpoint;
  name: EndpointName;
  bodies: Buffer[];
}

/**
 * The synced lists a first sync reads from a sandbox of `size`, as it answers them: raw bodies, up to `pages` per
 * list (0: all), of `lists` only when given.
 */
export async function recordPages(o: { size: string; pages: number; lists?: readonly string[] }): Promise<Recorded[]> {
  const sandbox = await startSandboxProcess({ size: o.size, rateLimit: '1000000/1s' });
  const pool = new Pool(sandbox.url, { connections: 2 });
  const byName = new Map<EndpointName, Recorded>();
  try {
    for (const [name, query] of await reads(sandbox.info)) {
      if (o.lists?.length && !o.lists.includes(name)) continue;
      const e = endpoints[name] as Endpoint;
      const rec = byName.get(name) ?? { endpoint: e, name, bodies: [] };
      byName.set(name, rec);
      for (let offset = 0; o.pages === 0 || rec.bodies.length < o.pages; offset += PAGE_LIMIT_MAX) {
        const res = await pool.request({
          method: 'GET',
          path: pagePath(name, query, offset),
          headers: { [AUTH_HEADER]: BENCH_KEY },
        });
        const bytes = Buffer.from(await res.body.arrayBuffer());
        if (res.statusCode !== 200)
          throw new Error(`${name}: HTTP ${res.statusCode} ${bytes.toString('utf8', 0, 200)}`);
        const body = JSON.parse(bytes.toString('utf8')) as { HasMoreResults?: boolean; Data?: unknown[] } | unknown[];
        const items = Array.isArray(body) ? body : (body.Data ?? []);
        if (items.length > 0) rec.bodies.push(bytes);
        if (Array.isArray(body) || !body.HasMoreResults) break;
      }
    }
  } finally {
    await pool.close();
    sandbox.stop();
  }
  return [...byName.values()].filter((r) => r.bodies.length > 0);
}
