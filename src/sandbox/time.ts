/**
 * Time values as the service writes them (service-spec.md, "Conventions"): date-only `yyyy-MM-dd`,
 * and date-times that always carry a UTC offset. The sandbox keeps instants as epoch milliseconds and
 * formats them in the offset of the locale they belong to, so both `-05:00` and `+01:00` appear.
 */
export const HOUR_MS = 3_600_000;
export const DAY_MS = 86_400_000;

/** The UTC day number of an instant (days since 1970-01-01). */
export function dayOf(ms: number): number {
  return Math.floor(ms / DAY_MS);
}

/** `yyyy-MM-dd` of an instant, in UTC. */
export function dateOnly(ms: number): string {
  return new Date(ms).toISOString().slice(0, 10);
}

/** `yyyy-MM-dd` of a UTC day number. */
export function dateOfDay(day: number): string {
  return dateOnly(day * DAY_MS);
}

/** `yyyy-MM-ddTHH:mm:ss±hh:mm`: the local wall time at `offsetMinutes` from UTC. */
export function dateTime(ms: number, offsetMinutes: number): string {
  const local = new Date(ms + offsetMinutes * 60_000).toISOString().slice(0, 19);
  return local + offsetText(offsetMinutes);
}

const offsetCache = new Map<number, string>();

function offsetText(offsetMinutes: number): string {
  let text = offsetCache.get(offsetMinutes);
  if (text === undefined) {
    const sign = offsetMinutes < 0 ? '-' : '+';
    const abs = Math.abs(offsetMinutes);
    text = `${sign}${String(Math.floor(abs / 60)).padStart(2, '0')}:${String(abs % 60).padStart(2, '0')}`;
    offsetCache.set(offsetMinutes, text);
  }
  return text;
}

/** Epoch ms of a date or date-time string; NaN when it is not one. */
export function parseInstant(value: string | null | undefined): number {
  if (!value) return NaN;
  return /^\d{4}-\d{2}-\d{2}$/.test(value) ? Date.parse(`${value}T00:00:00Z`) : Date.parse(value);
}

/** The instant of a query value the HTTP layer parsed (a Date), or undefined when the value is absent. */
export function instantOf(value: unknown): number | undefined {
  if (value instanceof Date) return value.getTime();
  if (typeof value === 'string') {
    const ms = parseInstant(value);
    return Number.isNaN(ms) ? undefined : ms;
  }
  return undefined;
}

/** The `yyyy-MM-dd` a date query value names (UTC calendar day of the parsed value). */
export function dateKeyOf(value: unknown): string | undefined {
  const ms = instantOf(value);
  return ms === undefined ? undefined : dateOnly(ms);
}
