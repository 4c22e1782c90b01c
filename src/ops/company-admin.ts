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
import { audited, type Actor } from '../warehouse/audit.ts';
import { createToken, revokeToken, type ApiToken, type NewToken } from '../warehouse/api-tokens.ts';
import { grantAccess, revokeAccess, type GrantRequest } from '../warehouse/access.ts';
import {
  applyPendingRewrites,
  erase,
  setPersonalDataPolicy,
  type Erasure,
  type PersonalData,
  type PersonRef,
  type PolicySet,
} from '../warehouse/personal-data/admin.ts';
import { DEFAULT_POLICY_KEY } from '../warehouse/personal-data/policy.ts';
import type { RewriteCounts } from '../warehouse/personal-data/rewrite.ts';
import { personalData } from '../resources/index.ts';
import {
  classifyField,
  setNewFieldMode,
  type Classified,
  type ModeSet,
} from '../warehouse/personal-data/new-fields.ts';

/**
 * An operator's changes, the same from the CLI, the dashboard and the JSON routes: companies added, paused,
 * resumed, re-keyed and removed, personal-data policies and erasures, access grants, API tokens. Each is audited here, with
 * the actor the entry point names, and checked (a new or rotated key against the service, with one request)
 * before the table is touched. Running processes pick a change up at their next refresh of the table.
 */
/** A change to a company's streams: off (and maybe purge) or on. */
export type StreamsChangeInput = { off: readonly StreamName[]; purge?: boolean } | { on: readonly StreamName[] };

export type KeyChecker = typeof checkApiKey;

export interface CompanyAdminOptions {
  warehouse: Warehouse;
  sealer: Sealer;
  check?: KeyChecker;
  /**
   * How long running processes take to see a pause (their refresh of the table, and the page in flight): a purge of
   * a company not paused pauses it and waits this long first, so no page lands after its rows are gone.
   */
  settleMs?: number;
  /** The personal fields and where they are stored; the catalog's by default. */
  personalData?: PersonalData;
}

const summary = (pairs: Readonly<Record<string, unknown>>) =>
  Object.entries(pairs)
    .map(([f, a]) => `${f}=${String(a)}`)
    .join(' ')
    .slice(0, 500);

export class CompanyAdmin {
  readonly #wh: Warehouse;
  readonly #check: KeyChecker;
  readonly #pd: PersonalData;

  constructor(readonly o: CompanyAdminOptions) {
    this.#wh = o.warehouse;
    this.#check = o.check ?? checkApiKey;
    this.#pd = o.personalData ?? personalData;
  }

  list(): Promise<CompanyRecord[]> {
    return listCompanies(this.#wh);
  }

  /** The company's timeline, newest first (a removed company's too: its removal is on it). */
  timeline(key: string, q?: Omit<EventQuery, 'companyKey'>): Promise<EventRow[]> {
    return listEvents(this.#wh, { ...q, companyKey: key });
  }

  add(by: Actor, c: NewCompany): Promise<CompanyRecord> {
    return audited(this.#wh, by, 'companies add', { company: c.key }, async () => {
      if (await findCompany(this.#wh, c.key))
        throw new CompanyError('already_added', `company ${c.key} is already added (wfsync companies list)`);
      const rateLimit = c.rateLimit ?? { ...DEFAULTS.rateLimit };
      this.#refuseUnless(c.key, await this.#check({ baseUrl: c.baseUrl, apiKey: c.apiKey, rateLimit }));
      return addCompany(this.#wh, this.o.sealer, c);
    });
  }

  pause(by: Actor, key: string): Promise<CompanyRecord> {
    return audited(this.#wh, by, 'companies pause', { company: key }, () => setPaused(this.#wh, key, true));
  }

  resume(by: Actor, key: string): Promise<CompanyRecord> {
    return audited(this.#wh, by, 'companies resume', { company: key }, () => setPaused(this.#wh, key, false));
  }

  rotateKey(by: Actor, key: string, apiKey: string): Promise<CompanyRecord> {
    return audited(this.#wh, by, 'companies rotate-key', { company: key }, async () => {
      const known = await findCompany(this.#wh, key);
      // The table's own refusals (unknown, the environment's) come first: they need no request.
      if (known && known.managedBy !== 'environment')
        this.#refuseUnless(key, await this.#check({ baseUrl: known.baseUrl, apiKey, rateLimit: known.rateLimit }));
      return rotateKey(this.#wh, this.o.sealer, key, apiKey);
    });
  }

  remove(by: Actor, key: string, r?: { purge?: boolean }): Promise<{ removed: CompanyRecord; purged?: Purged }> {
    return audited(this.#wh, by, 'companies remove', { company: key, target: r?.purge ? 'purge' : null }, async () => {
      if (r?.purge) {
        const known = await findCompany(this.#wh, key);
        if (known && known.managedBy === 'operator' && !known.paused) {
          await setPaused(this.#wh, key, true);
          await new Promise((resolve) => setTimeout(resolve, this.o.settleMs ?? 0));
        }
      }
      return removeCompany(this.#wh, key, r);
    });
  }

  /** The company, if it is added. */
  find(key: string): Promise<CompanyRecord | undefined> {
    return findCompany(this.#wh, key);
  }

  /** Turns streams off or on; `purge` (with `off`) deletes their rows too, once running processes stopped them. */
  streams(by: Actor, key: string, change: StreamsChangeInput): Promise<{ company: CompanyRecord; purged?: Purged }> {
    const target =
      'off' in change ? `off ${change.off.join(',')}${change.purge ? ' purge' : ''}` : `on ${change.on.join(',')}`;
    return audited(this.#wh, by, 'companies streams', { company: key, target }, async () => {
      const rule: StreamsChange = 'off' in change ? { off: change.off } : { on: change.on };
      const changed = await changeStreamsOff(this.#wh, key, (current) => streamsOffAfter(key, current, rule));
      if (!('off' in change) || !change.purge) return { company: changed.after };
      // Runs under way stop after their page once running processes read the table: none may land after the purge.
      if (change.off.some((s) => !changed.before.streamsOff.includes(s)))
        await new Promise((resolve) => setTimeout(resolve, this.o.settleMs ?? 0));
      return { company: changed.after, purged: await purgeStreamRows(this.#wh, key, change.off.map(streamRows)) };
    });
  }

  /** Classifies a field the service added, for a company or (`*`) by default. */
  classify(by: Actor, company: string, field: string, cls: unknown): Promise<Classified> {
    const on = {
      company: company === DEFAULT_POLICY_KEY ? null : company,
      target: `${field.slice(0, 200)} ${String(cls).slice(0, 40)}`,
    };
    return audited(this.#wh, by, 'schema classify', on, () => classifyField(this.#wh, this.#pd, company, field, cls));
  }

  /** Keeps or holds the values of unclassified fields, for a company or (`*`) by default. */
  newFields(by: Actor, company: string, mode: unknown): Promise<ModeSet> {
    const on = { company: company === DEFAULT_POLICY_KEY ? null : company, target: String(mode).slice(0, 40) };
    return audited(this.#wh, by, 'schema new-fields', on, () => setNewFieldMode(this.#wh, this.#pd, company, mode));
  }

  /** Sets fields' policies for a company (or `*`, the default) and rewrites what is stored before it returns. */
  setPolicy(
    by: Actor,
    company: string,
    pairs: Readonly<Record<string, unknown>>,
    onCounts?: (company: string, counts: RewriteCounts) => void,
  ): Promise<PolicySet> {
    const on = { company: company === DEFAULT_POLICY_KEY ? null : company, target: summary(pairs) };
    return audited(this.#wh, by, 'personal-data set', on, () =>
      setPersonalDataPolicy(this.#wh, this.#pd, company, pairs, onCounts),
    );
  }

  /** Finishes the rewrites a policy change left pending. */
  applyPolicies(by: Actor): Promise<Record<string, RewriteCounts>> {
    return audited(this.#wh, by, 'personal-data apply', {}, async (note) => {
      const done = await applyPendingRewrites(this.#wh, this.#pd);
      note.target(Object.keys(done).join(' ') || 'nothing pending');
      return done;
    });
  }

  /**
   * Erases one person; the audit names them by ServiceId, or by the erasure alone (an employee number is
   * personal). `onBehalfOf` (a privacy office, a ticket) is kept beside the actor in the erasure's requested_by.
   */
  erase(by: Actor, company: string, ref: PersonRef, onBehalfOf?: string): Promise<Erasure> {
    const target = 'serviceId' in ref ? `ServiceId ${ref.serviceId}` : 'by employee number';
    return audited(this.#wh, by, 'erase', { company, target }, async (note) => {
      const done = await erase(this.#wh, this.#pd, company, ref, onBehalfOf ? `${by} (${onBehalfOf})` : by);
      note.target(`${target}: erasure ${done.id}`);
      return done;
    });
  }

  grant(by: Actor, req: GrantRequest): Promise<void> {
    const on = { company: req.companies.length === 1 ? req.companies[0] : null, target: grantTarget(req) };
    return audited(this.#wh, by, 'access grant', on, () => grantAccess(this.#wh, req));
  }

  revoke(by: Actor, role: string, companies: string[] = []): Promise<{ left: string[] }> {
    const on = {
      company: companies.length === 1 ? companies[0] : null,
      target: `role ${role}${companies.length ? `: ${companies.join(',')}` : ''}`,
    };
    return audited(this.#wh, by, 'access revoke', on, () => revokeAccess(this.#wh, role, companies));
  }

  /** Makes a named API token; answers it, the only time it is seen. */
  createToken(by: Actor, n: Omit<NewToken, 'createdBy'>): Promise<{ token: string; record: ApiToken }> {
    const companies = n.companies ?? [];
    const on = {
      company: companies.length === 1 ? companies[0] : null,
      target: `token ${n.name}: ${n.scopes.join(',')}${companies.length ? ` for ${companies.join(',')}` : ''}`,
    };
    return audited(this.#wh, by, 'tokens create', on, () => createToken(this.#wh, { ...n, createdBy: by }));
  }

  revokeToken(by: Actor, name: string): Promise<void> {
    return audited(this.#wh, by, 'tokens revoke', { target: `token ${name}` }, () => revokeToken(this.#wh, name));
  }

  #refuseUnless(key: string, result: KeyCheck): void {
    if (!result.ok) throw new CompanyError(result.kind, `company ${key}: ${result.message}`);
  }
}

const grantTarget = (req: GrantRequest) =>
  `role ${req.role}: ${req.companies.join(',')}${req.personal ? ' with personal columns' : ''}${req.createWithPassword !== undefined ? ' (created)' : ''}`;

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
