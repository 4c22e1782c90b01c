import type { Context } from 'hono';
import { z } from 'zod';

/**
 * A route's query parameters as its zod schema reads them, or the 400 naming the first one refused: the push API's
 * routes and the ops server's read their queries this way, so a bad value gets the same answer everywhere.
 */
export function readQuery<T extends z.ZodType>(
  c: Context,
  schema: T,
): { ok: true; query: z.output<T> } | { ok: false; res: Response } {
  const parsed = schema.safeParse(c.req.query());
  if (parsed.success) return { ok: true, query: parsed.data };
  const issue = parsed.error.issues[0]!;
  // An unknown parameter (a strict schema's) has no path of its own.
  return { ok: false, res: c.json({ error: `${issue.path.join('.') || 'query'}: ${issue.message}` }, 400) };
}

/**
 * A whole number written in digits (not `1e3` or `0x10`, which a coercion would take), from 1 to `max`: the ids
 * of Postgres bigints (up to the largest exact JS integer), pages' limits and cursors.
 */
export const countParam = (max: number) =>
  z
    .string()
    .regex(/^\d{1,16}$/, `expected a whole number from 1 to ${max}`)
    .transform(Number)
    .refine((n) => n >= 1 && n <= max, `expected a whole number from 1 to ${max}`);

/** true or false, as a query writes a flag; `1`, `0` and an empty value are read as true, false and absent. */
export const flagParam = z
  .enum(['true', 'false', '1', '0', ''], { error: 'expected true or false' })
  .optional()
  .transform((v) => (v === '' || v === undefined ? undefined : v === 'true' || v === '1'));
