import { z } from 'zod';
import { DEFAULTS, formatRateLimit, parseRateLimit } from '../config.ts';
import type { Sealer } from '../warehouse/secret.ts';
import { checkApiKey, type KeyCheck } from './check-key.ts';
import {
  addCompany,
  COMPANY_KEY,
  CompanyError,
  findCompany,
  listCompanies,
  removeCompany,
  rotateKey,
  setPaused,
  type CompanyRecord,
  type NewCompany,
  type Purged,
} from '../warehouse/company-records.ts';
import type { Warehouse } from '../warehouse/connection.ts';
import { listEvents, type EventQuery, type EventRow } from '../warehouse/events.ts';
import { changeStreamsOff, purgeStreamRows } from '../warehouse/company-streams.ts';
import { isStreamName, STREAM_NAMES, type StreamName } from '../resources/index.ts';
import { streamRows, streamsOffAfter, type StreamsChange } from '../resources/streams-off.ts';

/**
 * What an operator does to the companies, the same from the CLI, the dashboard and the JSON routes: each change
 * is checked (a new or rotated key against the service, with one request) before the table is touched. Running
 * processes pick a change up at their next refresh of the table.
 */
export interface CompanyAdmin {
  list(): Promise<CompanyRecord[]>;
  add(c: NewCompany): Promise<CompanyRecord>;
  pause(key: string): Promise<CompanyRecord>;
  resume(key: string): Promise<CompanyRecord>;
  rotateKey(key: string, apiKey: string): Promise<CompanyRecord>;
  remove(key: string, o?: { purge?: boolean }): Promise<{ removed: CompanyRecord; purged?: Purged }>;
  /** The company's timeline, newest first (a removed company's too: its removal is on it). */
  timeline(key: string, q?: Omit<EventQuery, 'companyKey'>): Promise<EventRow[]>;
  /** The company, if it is added. */
  find(key: string): Promise<CompanyRecord | undefined>;
  /** Turns streams off or on; `purge` (with `off`) deletes their rows too, once running processes stopped them. */
  streams(key: string, change: StreamsChangeInput): Promise<{ company: CompanyRecord; purged?: Purged }>;
}

/** A change to a company's streams: off (and maybe purge) or on. */
export type StreamsChangeInput = { off: readonly StreamName[]; purge?: boolean } | { on: readonly StreamName[] };

export type KeyChecker = typeof checkApiKey;

export function companyAdmin(o: {
  warehouse: Warehouse;
  sealer: Sealer;
  check?: KeyChecker;
  /**
   * How long running processes take to see a pause (their refresh of the table, and the page in flight): a purge of
   * a company not paused pauses it and waits this long first, so no page lands after its rows are gone.
   */
  settleMs?: number;
}): CompanyAdmin {
  const { warehouse: wh, sealer } = o;
  const check = o.check ?? checkApiKey;
  const refuseUnless = (key: string, result: KeyCheck) => {
    if (!result.ok) throw new CompanyError(result.kind, `company ${key}: ${result.message}`);
  };
  return {
    list: () => listCompanies(wh),
    find: (key) => findCompany(wh, key),
    add: async (c) => {
      if (await findCompany(wh, c.key))
        throw new CompanyError('already_added', `company ${c.key} is already added (wfsync companies list)`);
      refuseUnless(
        c.key,
        await check({ baseUrl: c.baseUrl, apiKey: c.apiKey, rateLimit: c.rateLimit ?? { ...DEFAULTS.rateLimit } }),
      );
      return addCompany(wh, sealer, c);
    },
    pause: (key) => setPaused(wh, key, true),
    resume: (key) => setPaused(wh, key, false),
    rotateKey: async (key, apiKey) => {
      const known = await findCompany(wh, key);
      // The table's own refusals (unknown, the environment's) come first: they need no request.
      if (!known || known.managedBy === 'environment') return rotateKey(wh, sealer, key, apiKey);
      refuseUnless(key, await check({ baseUrl: known.baseUrl, apiKey, rateLimit: known.rateLimit }));
      return rotateKey(wh, sealer, key, apiKey);
    },
    remove: async (key, r) => {
      if (r?.purge) {
        const known = await findCompany(wh, key);
        if (known && known.managedBy === 'operator' && !known.paused) {
          await setPaused(wh, key, true);
          await new Promise((resolve) => setTimeout(resolve, o.settleMs ?? 0));
        }
      }
      return removeCompany(wh, key, r);
    },
    timeline: (key, q) => listEvents(wh, { ...q, companyKey: key }),
    streams: async (key, change) => {
      const rule: StreamsChange = 'off' in change ? { off: change.off } : { on: change.on };
      const { before, after } = await changeStreamsOff(wh, key, (current) => streamsOffAfter(key, current, rule));
      if (!('off' in change) || !change.purge) return { company: after };
      // Runs under way stop after their page once running processes read the table: none may land after the purge.
      if (change.off.some((s) => !before.streamsOff.includes(s)))
        await new Promise((resolve) => setTimeout(resolve, o.settleMs ?? 0));
      return { company: after, purged: await purgeStreamRows(wh, key, change.off.map(streamRows)) };
    },
  };
}

const ids = (field: string) =>
  z.union([
    z.array(z.number().int().positive()),
    z.string().transform((s, ctx) => {
      const parts = s
        .split(',')
        .map((p) => p.trim())
        .filter(Boolean);
      if (parts.some((p) => !/^\d{1,9}$/.test(p))) {
        ctx.addIssue({ code: 'custom', message: `${field}: expected ids such as 1,2` });
        return z.NEVER;
      }
      return parts.map(Number);
    }),
  ]);

/** A new company as the dashboard's form, the JSON route and the CLI's options give it; every field checked. */
const NewCompanyInput = z.object({
  key: z.string().regex(COMPANY_KEY, 'expected letters, digits, - or _ (at most 40)'),
  baseUrl: z.url({ protocol: /^https?$/, message: 'expected an http:// or https:// URL' }).max(2000),
  apiKey: z
    .string()
    .min(1, 'required')
    .max(4096)
    .regex(/^[\x21-\x7e]+$/, 'expected printable characters without spaces'),
  formIds: ids('formIds').optional(),
  runTypeIds: ids('runTypeIds').optional(),
  rateLimit: z
    .string()
    .max(40)
    .transform((s, ctx) => {
      try {
        return parseRateLimit(s);
      } catch (e) {
        ctx.addIssue({ code: 'custom', message: (e as Error).message });
        return z.NEVER;
      }
    })
    .optional(),
});

export type Parsed<T> = { ok: true; value: T } | { ok: false; error: string };

/** The first problem, naming its field: `baseUrl: expected an http:// or https:// URL`. */
function firstIssue(error: z.ZodError): string {
  const issue = error.issues[0]!;
  const field = issue.path.map(String).join('.') || 'body';
  return `${field}: ${issue.message}`;
}

/** Empty strings (a form's blank fields) count as absent. */
function present(fields: Record<string, unknown>): Record<string, unknown> {
  return Object.fromEntries(Object.entries(fields).filter(([, v]) => v !== '' && v !== undefined && v !== null));
}

export function parseNewCompany(fields: unknown): Parsed<NewCompany> {
  if (typeof fields !== 'object' || fields === null || Array.isArray(fields))
    return {
      ok: false,
      error: 'body: expected an object of key, baseUrl, apiKey and optional formIds, runTypeIds, rateLimit',
    };
  const parsed = NewCompanyInput.strict().safeParse(present(fields as Record<string, unknown>));
  return parsed.success ? { ok: true, value: parsed.data } : { ok: false, error: firstIssue(parsed.error) };
}

const ApiKeyInput = z.object({ apiKey: NewCompanyInput.shape.apiKey }).strict();

export function parseApiKey(fields: unknown): Parsed<string> {
  if (typeof fields !== 'object' || fields === null || Array.isArray(fields))
    return { ok: false, error: 'body: expected an object with apiKey' };
  const parsed = ApiKeyInput.safeParse(present(fields as Record<string, unknown>));
  return parsed.success ? { ok: true, value: parsed.data.apiKey } : { ok: false, error: firstIssue(parsed.error) };
}

/** Streams as a list or a comma-separated text: each named once, every one of the catalog. */
const streamList = z.union([z.array(z.string().max(200)).max(100), z.string().max(4000)]).transform((given, ctx) => {
  const names = (typeof given === 'string' ? given.split(',') : given).map((n) => n.trim()).filter(Boolean);
  const unknown = names.find((n) => !isStreamName(n));
  if (names.length === 0 || unknown !== undefined) {
    ctx.addIssue({
      code: 'custom',
      message: `${unknown === undefined ? 'name at least one stream' : `"${unknown.slice(0, 64)}" is not a stream`}; streams: ${STREAM_NAMES.join(', ')}`,
    });
    return z.NEVER;
  }
  return [...new Set(names)] as StreamName[];
});

const StreamsChangeFields = z
  .object({ off: streamList.optional(), on: streamList.optional(), purge: z.boolean().optional() })
  .strict()
  .superRefine((c, ctx) => {
    const issue = (path: string, message: string) => ctx.addIssue({ code: 'custom', path: [path], message });
    if (c.off && c.on) issue('body', 'give off or on, not both');
    else if (!c.off && !c.on) issue('body', 'give off or on: the streams to turn off, or on again');
    else if (c.on && c.purge) issue('purge', 'only with off: turning a stream on deletes nothing');
  });

/** A change to a company's streams as the CLI, the JSON route and the dashboard's form give it. */
export function parseStreamsChange(fields: unknown): Parsed<StreamsChangeInput> {
  if (typeof fields !== 'object' || fields === null || Array.isArray(fields))
    return { ok: false, error: 'body: expected an object with off (and optional purge) or on: lists of streams' };
  const parsed = StreamsChangeFields.safeParse(present(fields as Record<string, unknown>));
  if (!parsed.success) return { ok: false, error: firstIssue(parsed.error) };
  const { off, on, purge } = parsed.data;
  return { ok: true, value: off ? { off, purge: !!purge } : { on: on! } };
}

/** A company as answers show it: never its API key. */
export function companyView(c: CompanyRecord) {
  return {
    key: c.key,
    baseUrl: c.baseUrl,
    formIds: c.formIds,
    runTypeIds: c.runTypeIds,
    rateLimit: formatRateLimit(c.rateLimit),
    paused: c.paused,
    streamsOff: c.streamsOff,
    managedBy: c.managedBy,
    createdAt: c.createdAt.toISOString(),
    updatedAt: c.updatedAt.toISOString(),
  };
}
