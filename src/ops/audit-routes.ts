import { Hono } from 'hono';
import { z } from 'zod';
import { bearer, callerOf, mayActFor, notForCompany, type BearerOptions } from '../push/bearer.ts';
import { countParam, readQuery } from '../push/http-query.ts';
import { listAudit } from '../warehouse/audit.ts';
import { COMPANY_KEY } from '../warehouse/company-records.ts';

/** `GET /api/audit`: the audit trail for automation (a SIEM, a privacy office's export), behind an admin token. */

const PAGE = 100;
const PAGE_MAX = 1000;

const AuditQuery = z.strictObject({
  company: z.string().regex(COMPANY_KEY, 'expected a company key').optional(),
  actor: z
    .string()
    .max(300)
    .regex(/^[^\p{Cc}]+$/u, 'expected an actor such as cli:ann or token:')
    .optional(),
  since: z.iso.datetime({ offset: true }).or(z.iso.date()).optional(),
  before: countParam(2 ** 31 - 1).optional(),
  limit: countParam(PAGE_MAX).optional(),
});

export function auditApi(o: BearerOptions): Hono {
  const api = new Hono();
  api.use('*', bearer(o, 'admin'));
  api.get('/', async (c) => {
    const q = readQuery(c, AuditQuery);
    if (!q.ok) return q.res;
    const caller = callerOf(c);
    const company = q.query.company ?? (caller.companies.length === 1 ? caller.companies[0] : undefined);
    if (company && !mayActFor(caller, company)) return notForCompany(c, company);
    if (!company && caller.companies.length > 0)
      return c.json({ error: 'company: required: this token acts on some companies only' }, 400);
    const limit = q.query.limit ?? PAGE;
    const rows = await listAudit(o.warehouse, {
      company,
      actor: q.query.actor,
      since: q.query.since ? new Date(q.query.since) : undefined,
      beforeId: q.query.before,
      limit,
    });
    return c.json({ audit: rows, next: rows.length === limit ? rows.at(-1)!.id : null });
  });
  return api;
}
