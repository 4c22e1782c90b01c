import type { Warehouse } from '../warehouse/connection.ts';
import type { PushKind } from '../warehouse/tables/push.ts';
import { checkBounds } from './bounds.ts';
import { store, type Stored } from './outbox.ts';
import type { Sealer } from '../warehouse/secret.ts';
import { checkers, type Accepted, type Fields } from './validate.ts';
import type { FieldPolicy } from './field-policy.ts';

/**
 * Intake: the one path every change takes, from HTTP, the CLI or the library. Every item is checked first;
 * if any is refused nothing is stored, and the answer names each refused item and field. Otherwise all are
 * stored in one transaction before the answer.
 */

export interface IntakeCompany {
  key: string;
  singleSignOn?: boolean;
}

export interface IntakeContext {
  warehouse: Warehouse;
  sealer: Sealer;
  companies: readonly IntakeCompany[];
  /** Companies besides `companies`, read at each intake: those added to the companies table while running. */
  added?: () => Promise<readonly IntakeCompany[]>;
  /** The companies' personal-data policies, which a preview and a model compare under; every field kept when absent. */
  policy?: FieldPolicy;
}

export interface RefusedItem {
  index: number;
  changeId?: string;
  fields: Fields;
}

export type IntakeResult = { ok: true; accepted: Stored[] } | { ok: false; refused: RefusedItem[] };

function companyOf(companies: readonly IntakeCompany[], named: string | undefined): IntakeCompany | string {
  if (named)
    return (
      companies.find((c) => c.key === named) ??
      `unknown company "${named}" (configured: ${companies.map((c) => c.key).join(', ')})`
    );
  if (companies.length === 1) return companies[0]!;
  return `company is required: several companies are configured (${companies.map((c) => c.key).join(', ')})`;
}

/** The configured companies and, after them, those the companies table adds. */
export async function knownCompanies(ctx: IntakeContext): Promise<readonly IntakeCompany[]> {
  if (!ctx.added) return ctx.companies;
  const configured = new Set(ctx.companies.map((c) => c.key));
  return [...ctx.companies, ...(await ctx.added()).filter((c) => !configured.has(c.key))];
}

/** Each item checked against its company's rules, as intake and a preview check it; nothing is stored. */
export interface CheckedItems {
  refused: RefusedItem[];
  accepted: { index: number; company: string; change: Accepted }[];
}

export async function checkItems(ctx: IntakeContext, kind: PushKind, items: readonly unknown[]): Promise<CheckedItems> {
  const refused: RefusedItem[] = [];
  const accepted: CheckedItems['accepted'] = [];
  if (items.length === 0) return { refused: [{ index: 0, fields: { body: 'no change was sent' } }], accepted };
  const outOfBounds = checkBounds(items);
  if (outOfBounds)
    return {
      refused: [
        outOfBounds.kind === 'too-many'
          ? { index: 0, fields: { body: outOfBounds.message } }
          : { index: outOfBounds.index, fields: { [outOfBounds.field]: outOfBounds.message } },
      ],
      accepted,
    };
  const companies = await knownCompanies(ctx);
  items.forEach((raw, index) => {
    const named =
      raw && typeof raw === 'object' && typeof (raw as { company?: unknown }).company === 'string'
        ? (raw as { company: string }).company
        : undefined;
    const company = companyOf(companies, named);
    const checked = checkers[kind](raw, typeof company === 'string' ? {} : company);
    const fields: Fields = checked.ok ? {} : { ...checked.fields };
    if (typeof company === 'string') fields.company = company;
    if (Object.keys(fields).length > 0) {
      refused.push({ index, changeId: checked.ok ? checked.change.changeId : checked.changeId, fields });
    } else if (checked.ok && typeof company !== 'string') {
      accepted.push({ index, company: company.key, change: checked.change });
    }
  });
  return { refused, accepted };
}

export async function intake(ctx: IntakeContext, kind: PushKind, items: readonly unknown[]): Promise<IntakeResult> {
  const { refused, accepted } = await checkItems(ctx, kind, items);
  if (refused.length > 0) return { ok: false, refused };
  const out: Stored[] = new Array(items.length);
  const byCompany = new Map<string, number[]>();
  for (const [i, a] of accepted.entries()) byCompany.set(a.company, [...(byCompany.get(a.company) ?? []), i]);
  for (const [company, indexes] of byCompany) {
    const stored = await store(
      ctx.warehouse,
      company,
      indexes.map((i) => accepted[i]!.change),
      ctx.sealer,
    );
    for (const [j, i] of indexes.entries()) out[i] = stored[j]!;
  }
  return { ok: true, accepted: out };
}

/** Individuals to insert or update (upserts by EmployeeNumber, UniqueNumber or ServiceId). */
export const pushIndividuals = (ctx: IntakeContext, items: readonly unknown[]) => intake(ctx, 'individual', items);
/** Credentials to insert (holder + CertificationId + CertificationNumber) or update (IndividualCertificationId). */
export const pushCertifications = (ctx: IntakeContext, items: readonly unknown[]) =>
  intake(ctx, 'certification', items);
/** Verification results, sent to the service in ValidateSubmission batches. */
export const pushVerifications = (ctx: IntakeContext, items: readonly unknown[]) => intake(ctx, 'verification', items);

/** A body as JSON (one object or an array) or NDJSON (one object a line). */
export function parseBody(text: string, ndjson: boolean): { items: unknown[] } | { error: string } {
  if (ndjson) {
    const items: unknown[] = [];
    const lines = text.split('\n');
    for (let i = 0; i < lines.length; i++) {
      const line = lines[i]!.trim();
      if (!line) continue;
      try {
        items.push(JSON.parse(line));
      } catch {
        return { error: `line ${i + 1} is not JSON` };
      }
    }
    return { items };
  }
  try {
    const body: unknown = JSON.parse(text);
    return { items: Array.isArray(body) ? body : [body] };
  } catch {
    // A file of one object a line is NDJSON whatever it was called.
    if (text.trim().includes('\n')) return parseBody(text, true);
    return { error: 'the body is not JSON' };
  }
}
