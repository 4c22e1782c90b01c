/**
 * The ISO text of an instant, as `toISOString` writes it. V8 formats each toISOString afresh through printf, most
 * of a microsecond; a key part of every dated record takes one. Here the day's text comes from a small cache (a
 * page's records fall on few days) and the time of day from tables.
 */

const DAY_MS = 86_400_000;
const TWO_DIGITS = Array.from({ length: 100 }, (_, i) => String(i).padStart(2, '0'));
const THREE_DIGITS = Array.from({ length: 1000 }, (_, i) => String(i).padStart(3, '0'));

/** `yyyy-MM-ddT` (or an extended year's) by day number; emptied when it grows past MAX_DAYS. */
const dayTexts = new Map<number, string>();
const MAX_DAYS = 4096;

function dayText(day: number): string {
  let text = dayTexts.get(day);
  if (text !== undefined) return text;
  if (dayTexts.size >= MAX_DAYS) dayTexts.clear();
  const iso = new Date(day * DAY_MS).toISOString();
  dayTexts.set(day, (text = iso.slice(0, iso.indexOf('T') + 1)));
  return text;
}

/** `new Date(ms).toISOString()` for a valid time value `ms`. */
export function instantText(ms: number): string {
  const day = Math.floor(ms / DAY_MS);
  let rest = ms - day * DAY_MS;
  const hours = Math.floor(rest / 3_600_000);
  rest -= hours * 3_600_000;
  const minutes = Math.floor(rest / 60_000);
  rest -= minutes * 60_000;
  const seconds = Math.floor(rest / 1000);
  rest -= seconds * 1000;
  return `${dayText(day)}${TWO_DIGITS[hours]}:${TWO_DIGITS[minutes]}:${TWO_DIGITS[seconds]}.${THREE_DIGITS[rest]}Z`;
}
