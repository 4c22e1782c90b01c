import type { PushKind } from '../warehouse/tables/push.ts';
import { snake } from '../warehouse/mapper.ts';
import type { Warehouse } from '../warehouse/connection.ts';
import { tableInfo } from '../warehouse/catalog.ts';
import { KEEP_EVERYTHING, treatmentOf, type FieldPolicy, type FieldTreatment } from './field-policy.ts';
import { checkItems, type IntakeContext } from './intake.ts';
import type { Accepted, Fields } from './validate.ts';

/**
 * A dry run: what a push would do, read from the warehouse and never written anywhere. Each change is checked
 * as intake checks it, matched to the warehouse's current record the way the sender looks it up, and compared
 * field by field under the company's personal-data policy; the requests it would cost are counted as the
 * senders spend them.
 */

export type PreviewAction = 'insert' | 'update' | 'submit';

export interface PreviewedChange {
  index: number;
  changeId?: string;
  company?: string;
  valid: boolean;
  /** Why intake would refuse it, by field (only when not valid). */
  refused?: Fields;
  action?: PreviewAction;
  /** The warehouse's record the change would update (its ids), or null for an insert. */
  record?: Record<string, number> | null;
  /** Fields that would change, as [warehouse's value, pushed value]; a hashed field shows hashes on both sides. */
  changed?: Record<string, [unknown, unknown]>;
  /** Fields sent with the value the warehouse already holds. */
  unchanged?: string[];
  /** Fields sent that cannot be compared, and why (blocked by the policy, or never kept in the warehouse). */
  notCompared?: Record<string, string>;
  /** Something the service may answer otherwise than the warehouse suggests. */
  note?: string;
  /** Requests the change would cost at the service (verification results: the batch's request is on its first). */
  requests: number;
}

export interface Preview {
  dryRun: true;
  valid: number;
  refused: number;
  inserts: number;
  updates: number;
  /** Valid changes that would change no field the warehouse holds. */
  noChange: number;
  requests: number;
  changes: PreviewedChange[];
}

/** Verification results per ValidateSubmission request (the push runner's default batch). */
const VERIFICATION_BATCH = 100;

/** Fields that pick the record rather than set it. */
const IDENTITY: Record<PushKind, readonly string[]> = {
  individual: [],
  certification: ['IndividualCertificationId', 'ServiceId', 'EmployeeNumber', 'UniqueIdentifier'],
  verification: [],
};

export async function previewPush(ctx: IntakeContext, kind: PushKind, items: readonly unknown[]): Promise<Preview> {
  const { refused, accepted } = await checkItems(ctx, kind, items);
  const policy = ctx.policy ?? KEEP_EVERYTHING;
  const changes: PreviewedChange[] = refused.map((r) => ({
    index: r.index,
    changeId: r.changeId,
    valid: false,
    refused: r.fields,
    requests: 0,
  }));
  const current = kind === 'verification' ? [] : await currentRecords(ctx.warehouse, kind, accepted);
  const policies = new Map<string, ReadonlyMap<string, FieldTreatment>>();
  for (const a of accepted) if (!policies.has(a.company)) policies.set(a.company, await policy.fieldPolicy(a.company));
  const batches = new Map<string, number>();
  accepted.forEach((a, i) => {
    const base = { index: a.index, changeId: a.change.changeId, company: a.company, valid: true };
    if (kind === 'verification') {
      const seen = batches.get(a.company) ?? 0;
      batches.set(a.company, seen + 1);
      changes.push({
        ...base,
        action: 'submit',
        record: { IndividualCertificationId: Number(a.change.payload.IndividualCertificationId) },
        requests: seen % VERIFICATION_BATCH === 0 ? 1 : 0,
      });
      return;
    }
    changes.push({
      ...base,
      ...compared(kind, a.change, current[i] ?? null, { treatments: policies.get(a.company)!, policy }),
    });
  });
  changes.sort((x, y) => x.index - y.index);
  const valid = changes.filter((c) => c.valid);
  return {
    dryRun: true,
    valid: valid.length,
    refused: changes.length - valid.length,
    inserts: valid.filter((c) => c.action === 'insert').length,
    updates: valid.filter((c) => c.action === 'update').length,
    noChange: valid.filter((c) => c.action === 'update' && Object.keys(c.changed ?? {}).length === 0).length,
    requests: changes.reduce((n, c) => n + c.requests, 0),
    changes,
  };
}

type CurrentRow = Record<string, unknown> | null;

/**
 * Each accepted change's current warehouse row (as JSON): an individual by ServiceId, else EmployeeNumber, else
 * UniqueNumber, as the sender looks it up; a credential by IndividualCertificationId, or for an insert its
 * holder's row (by ServiceId, EmployeeNumber or UniqueIdentifier), to say whether it exists. One statement per
 * company, every table read by that company's key: on Citus it runs on the company's shard alone.
 */
async function currentRecords(
  wh: Warehouse,
  kind: PushKind,
  accepted: readonly { company: string; change: Accepted }[],
): Promise<CurrentRow[]> {
  const out: CurrentRow[] = new Array(accepted.length).fill(null);
  for (const company of new Set(accepted.map((a) => a.company))) {
    const at = accepted.flatMap((a, i) => (a.company === company ? [i] : []));
    const rows = await companyRecords(
      wh,
      kind,
      company,
      at.map((i) => accepted[i]!.change.payload),
    );
    for (const [j, i] of at.entries()) out[i] = rows[j] ?? null;
  }
  return out;
}

async function companyRecords(
  wh: Warehouse,
  kind: PushKind,
  company: string,
  p: readonly Accepted['payload'][],
): Promise<CurrentRow[]> {
  const s = `"${wh.schema}"`;
  const num = (v: unknown) => (typeof v === 'number' ? v : null);
  const str = (v: unknown) => (typeof v === 'string' ? v : null);
  const individual = (alias: string, sid: string, en: string, un: string) => `case
      when ${sid} is not null then (select to_jsonb(w) from ${s}.individuals w where w.company_key = $1 and w.service_id = ${sid} and w._deleted_at is null)
      when ${en} is not null then (select to_jsonb(w) from ${s}.individuals w where w.company_key = $1 and w.employee_number = ${en} and w._deleted_at is null order by w.service_id limit 1)
      when ${un} is not null then (select to_jsonb(w) from ${s}.individuals w where w.company_key = $1 and w.unique_number = ${un} and w._deleted_at is null order by w.service_id limit 1)
    end as ${alias}`;
  const rows =
    kind === 'individual'
      ? await wh.sql.unsafe<{ row: CurrentRow }[]>(
          `select ${individual('row', 'k.sid', 'k.en', 'k.un')}
           from unnest($2::int[], $3::text[], $4::text[]) with ordinality as k(sid, en, un, n) order by k.n`,
          [
            company,
            p.map((x) => num(x.ServiceId)),
            p.map((x) => str(x.EmployeeNumber)),
            p.map((x) => str(x.UniqueNumber)),
          ] as never[],
        )
      : await wh.sql.unsafe<{ row: CurrentRow }[]>(
          `select case when k.icid is not null
                    then (select to_jsonb(c) from ${s}.individual_certifications c where c.company_key = $1 and c.individual_certification_id = k.icid and c._deleted_at is null)
                    else jsonb_build_object('holder', h.holder) end as row
           from unnest($2::int[], $3::int[], $4::text[], $5::text[]) with ordinality as k(icid, sid, en, un, n)
           cross join lateral (select ${individual('holder', 'k.sid', 'k.en', 'k.un')}) h
           order by k.n`,
          [
            company,
            p.map((x) => num(x.IndividualCertificationId)),
            p.map((x) => num(x.ServiceId)),
            p.map((x) => str(x.EmployeeNumber)),
            p.map((x) => str(x.UniqueIdentifier)),
          ] as never[],
        );
  return rows.map((r) => r.row);
}

type Compared = Pick<
  PreviewedChange,
  'action' | 'record' | 'changed' | 'unchanged' | 'notCompared' | 'note' | 'requests'
>;

function compared(kind: PushKind, change: Accepted, row: CurrentRow, personal: PersonalTreatment): Compared {
  const p = change.payload;
  if (kind === 'individual') {
    const lookedUpBy =
      typeof p.ServiceId === 'number'
        ? 'ServiceId'
        : typeof p.EmployeeNumber === 'string'
          ? 'EmployeeNumber'
          : 'UniqueNumber';
    const extra: Record<string, string> = change.ssn ? { SSN: 'never kept in the warehouse' } : {};
    if (!row) {
      const diff = diffFields('individuals', p, {}, [], personal);
      if (lookedUpBy === 'ServiceId') {
        return {
          action: 'update',
          record: { ServiceId: Number(p.ServiceId) },
          ...diff,
          notCompared: { ...diff.notCompared, ...extra },
          note: `the warehouse has no individual with ServiceId ${String(p.ServiceId)}: the service refuses the change unless it has one`,
          requests: 1,
        };
      }
      // A lookup that finds nobody, then the Insert.
      return { action: 'insert', record: null, ...diff, notCompared: { ...diff.notCompared, ...extra }, requests: 2 };
    }
    const diff = diffFields('individuals', p, row, [lookedUpBy], personal);
    // A lookup (which returns the individual to merge into), then the Update.
    return {
      action: 'update',
      record: { ServiceId: Number(row.service_id) },
      ...diff,
      notCompared: { ...diff.notCompared, ...extra },
      requests: 2,
    };
  }
  if (typeof p.IndividualCertificationId === 'number') {
    const diff = diffFields('individual_certifications', p, row ?? {}, IDENTITY.certification, personal);
    const note = row
      ? undefined
      : `the warehouse has no credential ${p.IndividualCertificationId}: the service refuses the change unless it has one`;
    // The Update, then the holder's credential list read back into the warehouse.
    return {
      action: 'update',
      record: { IndividualCertificationId: p.IndividualCertificationId },
      ...diff,
      note,
      requests: 2,
    };
  }
  const holder = (row?.holder ?? null) as CurrentRow;
  const diff = diffFields('individual_certifications', p, {}, IDENTITY.certification, personal);
  const note = holder
    ? undefined
    : 'the warehouse has no such holder: the service refuses the credential unless the holder exists by then';
  // A holder lookup unless the ServiceId is given, the Insert, and the holder's credential list read back.
  return { action: 'insert', record: null, ...diff, note, requests: typeof p.ServiceId === 'number' ? 2 : 3 };
}

/** What a company's personal-data policy does to each field it names, and the hash it stores for `hash`. */
export interface PersonalTreatment {
  treatments: ReadonlyMap<string, FieldTreatment>;
  policy: FieldPolicy;
}

/** Compares each pushed field with the row's column (`snake_case` of the field, as the mapper names it). */
export function diffFields(
  table: string,
  payload: Record<string, unknown>,
  row: Record<string, unknown>,
  identity: readonly string[],
  { treatments, policy }: PersonalTreatment,
): Pick<PreviewedChange, 'changed' | 'unchanged' | 'notCompared'> {
  const info = tableInfo(table);
  const changed: Record<string, [unknown, unknown]> = {};
  const unchanged: string[] = [];
  const notCompared: Record<string, string> = {};
  for (const [field, value] of Object.entries(payload)) {
    if (identity.includes(field)) continue;
    const column = info.byName.get(snake(field));
    if (!column) {
      notCompared[field] = 'never kept in the warehouse';
      continue;
    }
    const treatment = treatmentOf(treatments, field);
    if (treatment === 'block') {
      notCompared[field] = "blocked by the company's personal-data policy: the warehouse holds no value to compare";
      continue;
    }
    const from = row[column.name] ?? null;
    const to =
      treatment === 'hash' && value !== null && value !== undefined
        ? policy.hashValue(String(value))
        : comparable(value, column.sqlType);
    if (same(from, to)) unchanged.push(field);
    else changed[field] = [from, to];
  }
  return { changed, unchanged, notCompared };
}

/** A pushed value as the warehouse would hold it: a date column keeps the day. */
function comparable(value: unknown, sqlType: string): unknown {
  if (value === undefined) return null;
  if (sqlType === 'date' && typeof value === 'string') return value.slice(0, 10);
  return value;
}

function same(a: unknown, b: unknown): boolean {
  if (typeof a === 'boolean' && typeof b === 'number') return a === (b === 1);
  if (typeof b === 'boolean' && typeof a === 'number') return b === (a === 1);
  return a === b;
}
