import type { Logger } from '../log.ts';
import type { SourceClient } from '../source/client.ts';
import { endpoints, targets } from '../resources/index.ts';
import { SourceError } from '../source/errors.ts';
import { INDIVIDUAL_READ_ONLY, type Individual, type IndividualCertification } from '../source/schemas/index.ts';
import { writePage } from '../warehouse/upsert.ts';
import type { Warehouse } from '../warehouse/connection.ts';
import type { OutboxRow } from './outbox.ts';
import type { Sealer } from '../warehouse/secret.ts';
import type { Fields } from './validate.ts';

/**
 * What one change (or a coalesced group of one individual's changes) does at the service, and what its
 * answer means. Every path that could send a write twice looks first: a change in doubt is settled by a
 * lookup (individual by key, credential by its holder's list) before anything is sent again.
 */

export type Verdict =
  | { outcome: 'applied'; individualId?: number; serviceId?: number; individualCertificationId?: number }
  | { outcome: 'refused'; message: string; fields?: Fields }
  | { outcome: 'failed'; message: string }
  /** The answer was lost or ambiguous: it may have been applied. */
  | { outcome: 'in_doubt'; message: string }
  /** The service surely did not act (rate limit): try again later. */
  | { outcome: 'retry'; message: string };

export interface SendContext {
  client: SourceClient;
  warehouse: Warehouse;
  company: string;
  sealer: Sealer;
  log: Logger;
}

/** How an error from the service settles a change. */
export function verdictOf(err: unknown): Verdict {
  if (!(err instanceof SourceError))
    return { outcome: 'in_doubt', message: err instanceof Error ? err.message : String(err) };
  if (err.status === 304)
    return { outcome: 'in_doubt', message: `the service answered 304 (error occurred): ${err.message}` };
  switch (err.kind) {
    case 'bad_request':
    case 'not_found':
      return { outcome: 'refused', message: err.message, fields: err.fields };
    case 'auth':
    case 'scope':
    case 'not_acceptable':
      return { outcome: 'failed', message: err.message };
    case 'rate_limit':
      return { outcome: 'retry', message: err.message };
    default:
      // server, network, timeout, a write accepted with an unreadable answer
      return { outcome: 'in_doubt', message: err.message };
  }
}

/** Reads a push makes (lookups, targeted reads) go in the push lane too, ahead of every pull. */
const PUSH = { lane: 'push' } as const;

const READ_ONLY = new Set<string>([...INDIVIDUAL_READ_ONLY, 'Supervisor']);
/** "On update an omitted value keeps the existing value": left out unless the change sets them. */
const KEPT_WHEN_OMITTED = ['IsSupervisor', 'ExcludeFromVerificationMonitoring'];

async function findIndividual(ctx: SendContext, p: Record<string, unknown>): Promise<Individual | undefined> {
  const c = ctx.client;
  const found =
    typeof p.ServiceId === 'number'
      ? await c.lookup(endpoints.individualByServiceId, { serviceId: p.ServiceId }, PUSH)
      : typeof p.EmployeeNumber === 'string'
        ? await c.lookup(endpoints.individualByEmployeeNumber, { employeeNumber: p.EmployeeNumber }, PUSH)
        : await c.lookup(endpoints.individualByUniqueIdentifier, { uniqueIdentifier: String(p.UniqueNumber) }, PUSH);
  return found.found ? found.item : undefined;
}

/** The individual as fetched, with the change's fields over it: the service replaces what is sent. */
export function mergedUpdate(
  current: Individual,
  change: Record<string, unknown>,
  ssn: string | undefined,
): Record<string, unknown> {
  const body: Record<string, unknown> = {};
  for (const [k, v] of Object.entries(current)) if (!READ_ONLY.has(k) && !KEPT_WHEN_OMITTED.includes(k)) body[k] = v;
  for (const [k, v] of Object.entries(change)) if (k !== 'SendWelcomeLetter') body[k] = v;
  body.ServiceId = current.ServiceId;
  if (ssn) body.SSN = ssn;
  return body;
}

const isTaken = (fields: Fields | undefined) =>
  Object.values(fields ?? {}).some((m) => /already used|taken|exists/i.test(m));

async function writeIndividual(ctx: SendContext, ind: Individual): Promise<void> {
  await writePage(ctx.warehouse, {
    target: targets.individuals,
    companyKey: ctx.company,
    items: [ind],
    syncedAt: new Date(),
    stream: 'push',
  });
}

/**
 * An individual's change (or several coalesced): look up by its key, then fetch → merge → Update, or Insert.
 * `inDoubt` says an earlier attempt may have been applied; an update is safe to redo, an insert is found by the lookup.
 */
export async function sendIndividual(
  ctx: SendContext,
  change: Record<string, unknown>,
  sealed: string | null,
  inDoubt: boolean,
): Promise<Verdict> {
  const ssn = sealed ? ctx.sealer.open(sealed) : undefined;
  try {
    const current = await findIndividual(ctx, change);
    let answer: Individual | null;
    if (current) {
      answer = await ctx.client.send(endpoints.individualUpdate, mergedUpdate(current, change, ssn));
    } else if (typeof change.ServiceId === 'number') {
      return {
        outcome: 'refused',
        message: `no individual with ServiceId ${change.ServiceId}`,
        fields: { ServiceId: `no individual with ServiceId ${change.ServiceId}` },
      };
    } else {
      try {
        answer = await ctx.client.send(endpoints.individualInsert, { ...change, ...(ssn ? { SSN: ssn } : {}) });
      } catch (err) {
        const v = verdictOf(err);
        // A retried insert refused as a duplicate may be our own lost insert: the lookup says.
        if (inDoubt && v.outcome === 'refused' && isTaken(v.fields)) {
          const again = await findIndividual(ctx, change);
          if (again) answer = again;
          else return v;
        } else return v;
      }
    }
    if (!answer) return { outcome: 'in_doubt', message: 'the service answered without the individual' };
    await writeIndividual(ctx, answer);
    return { outcome: 'applied', individualId: answer.IndividualId, serviceId: answer.ServiceId };
  } catch (err) {
    return verdictOf(err);
  }
}

async function holderServiceId(ctx: SendContext, p: Record<string, unknown>): Promise<number | undefined> {
  if (typeof p.ServiceId === 'number') return p.ServiceId;
  const c = ctx.client;
  const found =
    typeof p.EmployeeNumber === 'string'
      ? await c.lookup(endpoints.individualByEmployeeNumber, { employeeNumber: p.EmployeeNumber }, PUSH)
      : await c.lookup(endpoints.individualByUniqueIdentifier, { uniqueIdentifier: String(p.UniqueIdentifier) }, PUSH);
  return found.found ? found.item.ServiceId : undefined;
}

async function credentialsOf(ctx: SendContext, serviceId: number): Promise<IndividualCertification[]> {
  const page = await ctx.client.all(
    endpoints.individualCertifications,
    { ServiceId: serviceId, IncludeDeleted: true },
    PUSH,
  );
  return page.items;
}

async function writeCredentials(ctx: SendContext, items: readonly IndividualCertification[]): Promise<void> {
  if (items.length === 0) return;
  await writePage(ctx.warehouse, {
    target: targets['individual-certifications'],
    companyKey: ctx.company,
    items,
    syncedAt: new Date(),
    stream: 'push',
  });
}

const HOLDER_FIELDS = ['EmployeeNumber', 'UniqueIdentifier'];

/** A credential: Update by IndividualCertificationId (safe to redo), or Insert after checking the holder's list when in doubt. */
export async function sendCertification(
  ctx: SendContext,
  change: Record<string, unknown>,
  inDoubt: boolean,
): Promise<Verdict> {
  try {
    if (typeof change.IndividualCertificationId === 'number') {
      const body = Object.fromEntries(Object.entries(change).filter(([k]) => k !== 'EmployeeNumber'));
      const answer = await ctx.client.send(endpoints.certificationUpdate, body);
      const holder = answer?.ServiceId ?? (typeof change.ServiceId === 'number' ? change.ServiceId : undefined);
      if (holder) await writeCredentials(ctx, await credentialsOf(ctx, holder));
      return {
        outcome: 'applied',
        individualCertificationId: answer?.IndividualCertificationId ?? change.IndividualCertificationId,
        serviceId: holder,
      };
    }
    const serviceId = await holderServiceId(ctx, change);
    if (!serviceId) {
      const who = HOLDER_FIELDS.find((f) => typeof change[f] === 'string');
      const message = `no individual with ${who} ${String(change[who ?? 'ServiceId'])}: the holder must exist first`;
      return { outcome: 'refused', message, fields: { [who ?? 'ServiceId']: message } };
    }
    const matches = (c: IndividualCertification) =>
      c.CertificationId === change.CertificationId && c.CertificationNumber === change.CertificationNumber;
    if (inDoubt) {
      const list = await credentialsOf(ctx, serviceId);
      const mine = list.find(matches);
      if (mine) {
        await writeCredentials(ctx, list);
        return { outcome: 'applied', individualCertificationId: mine.IndividualCertificationId, serviceId };
      }
    }
    const body: Record<string, unknown> = { ServiceId: serviceId };
    for (const k of ['CertificationId', 'CertificationNumber', 'Reference', 'ActivationDate', 'ExpirationDate'])
      if (change[k] !== undefined) body[k] = change[k];
    const answer = await ctx.client.send(endpoints.certificationInsert, body);
    const list = await credentialsOf(ctx, serviceId).catch(() => (answer ? [answer] : []));
    await writeCredentials(ctx, list);
    return { outcome: 'applied', individualCertificationId: answer?.IndividualCertificationId, serviceId };
  } catch (err) {
    return verdictOf(err);
  }
}

/**
 * Verification results in one ValidateSubmission. A refused batch is split in halves until each refused
 * result stands alone; the others go through. Returns a verdict per row.
 */
export async function sendVerifications(ctx: SendContext, rows: readonly OutboxRow[]): Promise<Map<number, Verdict>> {
  const out = new Map<number, Verdict>();
  const send = async (batch: readonly OutboxRow[]): Promise<void> => {
    try {
      await ctx.client.send(
        endpoints.validateSubmission,
        batch.map((r) => r.payload),
      );
      for (const r of batch) out.set(r.id, { outcome: 'applied' });
    } catch (err) {
      const v = verdictOf(err);
      if (v.outcome === 'refused' && batch.length > 1) {
        const half = Math.ceil(batch.length / 2);
        await send(batch.slice(0, half));
        await send(batch.slice(half));
        return;
      }
      const own = v.outcome === 'refused' && v.fields ? { ...v, fields: unindexed(v.fields) } : v;
      for (const r of batch) out.set(r.id, own);
    }
  };
  await send(rows);
  return out;
}

/** `[0].IsVerified` → `IsVerified` for a result refused alone. */
function unindexed(fields: Fields): Fields {
  return Object.fromEntries(Object.entries(fields).map(([k, v]) => [k.replace(/^\[\d+\]\.?/, '') || 'body', v]));
}
