import { endpoints, type EndpointName } from '../resources/index.ts';
import { advance } from './clock.ts';
import { earlier } from './earlier.ts';
import { SIZES, generate, type SandboxSize } from './generate.ts';
import { queryKey, runQuery, type Listing } from './queries.ts';
import { Rng } from './rng.ts';
import {
  WRITE_ENDPOINTS,
  type Outcome,
  type Page,
  type ParsedQuery,
  type ReadResult,
  type SandboxData,
  type WriteStats,
} from './service.ts';
import { SandboxStore } from './store.ts';
import { runWrite } from './writes.ts';

export type { SandboxSize } from './generate.ts';

export interface SandboxDataOptions {
  seed?: number;
  size?: SandboxSize;
  /** The clock's start; fixed by default so runs are deterministic. */
  now?: Date;
  companyId?: number;
  /** How late a change record or audit row may become visible after its stamp; default 30 minutes, 0 for never. */
  lateMs?: number;
}

export const DEFAULT_LATE_MS = 30 * 60_000;

export const DEFAULT_NOW = new Date('2026-01-15T12:00:00Z');
export const DEFAULT_SEED = 1;
export const DEFAULT_COMPANY_ID = 4711;

/** How many filtered listings are kept; paging one query needs one, a few syncs in parallel need a few. */
const MEMO_ENTRIES = 32;

/**
 * The sandbox's data: a generated company (deterministic by seed and size) behind the SandboxData contract.
 * Filtered listings are memoized per (endpoint, query, data version), so paging through a million shift
 * assignments filters once and then slices.
 */
export function createSandboxData(opts: SandboxDataOptions = {}): SandboxData {
  const seed = opts.seed ?? DEFAULT_SEED;
  const size = SIZES[opts.size ?? 'small'];
  const store = new SandboxStore((opts.now ?? DEFAULT_NOW).getTime(), opts.companyId ?? DEFAULT_COMPANY_ID);
  store.lateMs = opts.lateMs ?? DEFAULT_LATE_MS;
  const root = new Rng(seed);
  generate(store, root.fork('generate'), size);
  const clockRng = root.fork('clock');
  const memo = new Map<string, { version: number; listing: Listing }>();

  function listing(endpoint: EndpointName, query: ParsedQuery): Outcome<Listing> {
    const key = queryKey(endpoint, query);
    const hit = memo.get(key);
    if (hit && hit.version === store.version) {
      memo.delete(key);
      memo.set(key, hit);
      return { ok: true, value: hit.listing };
    }
    const result = runQuery(store, endpoint, query, 'read');
    if (!result.ok) return result;
    memo.set(key, { version: store.version, listing: result.value });
    if (memo.size > MEMO_ENTRIES) memo.delete(memo.keys().next().value as string);
    return result;
  }

  return {
    now: () => new Date(store.nowMs),
    read(endpoint: EndpointName, query: ParsedQuery, page: Page): Outcome<ReadResult> {
      const result = listing(endpoint, query);
      if (!result.ok) return result;
      const { items, extras } = result.value;
      if (endpoints[endpoint].response.kind !== 'envelope')
        return { ok: true, value: { items, hasMore: false, ...(extras ? { extras } : {}) } };
      const offset = Math.max(0, page.offset);
      const end = offset + Math.max(0, page.limit);
      return {
        ok: true,
        value: { items: items.slice(offset, end), hasMore: end < items.length, ...(extras ? { extras } : {}) },
      };
    },
    write: (endpoint, body) => runWrite(store, endpoint, body),
    advance: (hours) => advance(store, clockRng, size, hours),
    truth(endpoint, query = {}) {
      const result = runQuery(store, endpoint, query, 'truth');
      return result.ok ? result.value.items : [];
    },
    earlier: (kind, record) => earlier(store, kind, record),
    writeStats: () => ({
      applied: Object.fromEntries(WRITE_ENDPOINTS.map((e) => [e, store.applied[e].length])) as WriteStats['applied'],
      duplicateRequestIds: store.duplicateRequestIds,
    }),
    companyId: () => store.companyId,
    formIds: () => store.forms.map((f) => f.FormId),
    runTypeIds: () => store.runTypes.map((t) => t.id),
  };
}
