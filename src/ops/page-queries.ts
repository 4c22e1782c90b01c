import { z } from 'zod';
import { countParam, flagParam } from '../push/http-query.ts';
import { STATE_FILTERS } from './overview.ts';

/**
 * The query parameters of the ops server's pages and /status, as zod schemas: a value that is not what the route
 * expects is refused with a 400 naming the parameter (the same words as `idParam` and `nameParam`), before anything
 * reaches Postgres. An empty parameter is an absent one.
 */

const blankAsAbsent = (v: unknown) => (v === '' ? undefined : v);

/** An id: a Postgres bigint read as a JS number, 1 up to the largest exact integer. */
const id = z.preprocess(blankAsAbsent, countParam(Number.MAX_SAFE_INTEGER).optional());

/** A company key or stream name as the service's words have them. */
const name = z.preprocess(
  blankAsAbsent,
  z
    .string()
    .regex(/^[A-Za-z0-9_-]{1,64}$/, 'expected letters, digits, - or _ (at most 64)')
    .optional(),
);

const state = z.preprocess(
  blankAsAbsent,
  z.enum(STATE_FILTERS, { error: `expected one of ${STATE_FILTERS.join(', ')}` }).optional(),
);

/** `/status`: ?company= names one company exactly; pages in key order after `cursor`. */
export const StatusQuery = z.object({ company: name, state, cursor: name, limit: id });

/** The overview: ?q= searches part of a key. */
export const OverviewQuery = z.object({ q: name, state, page: id });

/** A company's page: its timeline before an event id. */
export const CompanyPageQuery = z.object({ before: id });

export const RejectsQuery = z.object({ company: name, stream: name, before: id });

/** A day or an instant as ISO 8601 writes it (`2026-11-01`, `2026-11-01T08:00:00Z`), read as that instant. */
const instant = z.preprocess(
  blankAsAbsent,
  z
    .string()
    .regex(/^\d{4}-\d{2}-\d{2}/, 'expected an ISO date or time')
    .transform((s) => new Date(s))
    .refine((d) => !Number.isNaN(d.getTime()), 'expected an ISO date or time')
    .optional(),
);

/** `/api/companies/KEY/events`: the timeline since an instant, a page of `limit` events before an event id. */
export const CompanyEventsQuery = z.object({ since: instant, before: id, limit: id });

/** `DELETE /api/companies/KEY`: ?purge=true also deletes the company's rows. */
export const RemoveQuery = z.object({ purge: flagParam });
