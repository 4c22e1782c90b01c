import { Hono } from 'hono';
import { z } from 'zod';
import { bearer, callerOf, mayActFor, notForCompany, type BearerOptions } from '../push/bearer.ts';
import { listAudit } from '../warehouse/audit.ts';
import { COMPANY_KEY } from '../warehouse/company-records.ts';

/** `GET /api/audit`: the audit trail for automation (a SIEM, a privacy office's export), behind an admin token. */

const PAGE = 100;
const PAGE_MAX = 1000;

const digits = (max: number) =>
  z
    .string()
    .regex(/^\d{1,9}$/, 'expected a whole number')
    .transform(Number)
    .refine((n) => n >= 1 && n <= max, `expected a whole number from 1 to ${max}`);

const AuditQuery = z.strictObject({
  company: z.string().regex(COMPANY_KEY, 'expected a company key').optional(),
  actor: z
    .string()
    .max(300)
    .regex(/^[^\p{Cc}]+$/u, 'expected an actor such as cli:ann or token:')
    .optional(),
  since: z.iso.datetime({ offset: true }).or(z.iso.date()).optional(),
  before: digits(2 ** 31 - 1).optional(),
  limit: digits(PAGE_MAX).optional(),
});

export function auditApi(o: BearerOptions): Hono {
  const api = new Hono();
  api.use('*', bearer(o, 'admin'));
  api.get('/', async (c) => {
    const q = AuditQuery.safeParse(c.req.query());
    if (!q.success) {
      const issue = q.error.issues[0]!;
      return c.json({ error: `${issue.path.join('.') || 'query'}: ${issue.message}` }, 400);
    }
    const caller = callerOf(c);
    const company = q.data.company ?? (caller.companies.length === 1 ? caller.companies[0] : undefined);
    if (company && !mayActFor(caller, company)) return notForCompany(c, company);
    if (!company && caller.companies.length > 0)
      return c.json({ error: 'company: required: this token acts on some companies only' }, 400);
    const limit = q.data.limit ?? PAGE;
    const rows = await listAudit(o.warehouse, {
      company,
      actor: q.data.actor,
      since: q.data.since ? new Date(q.data.since) : undefined,
      beforeId: q.data.before,
      limit,
    });
    return c.json({ audit: rows, next: rows.length === limit ? rows.at(-1)!.id : null });
  });
  return api;
}
