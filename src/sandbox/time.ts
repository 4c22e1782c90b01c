import { DAY_MS, HOUR_MS } from '../resources/stream.ts';

/**
 * Time values as the service writes them (service-spec.md, "Conventions"): date-only `yyyy-MM-dd`,
 * and date-times that always carry a UTC offset. The sandbox keeps instants as epoch milliseconds and
 * formats them as local times of the time zone of the locale they belong to, with that zone's offset at that
 * instant: `-06:00` in a Chicago winter, `-05:00` in its summer, `+01:00`/`+02:00` in Köln.
 */
export { DAY_MS, HOUR_MS };

/**
 * The latest instant an event can be stamped at while the clock reads `nowMs`: just before it. Now is the moment a
 * reader asks, and its read of a window that ends at now (open at its end) must find every event so far. The
 * clock's events and form and run responses keep to it; the generated history's clock-ins and time-off reviews
 * stamp up to now itself, as the warehouse fixture of release 0.1.0 (test/fixtures) was written from them.
 */
export function latestStamp(nowMs: number): number {
  return nowMs - 1;
}

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

/** A time zone with daylight saving time: its offset from UTC at an instant, and the instant of a local wall time. */
export interface Zone {
  readonly name: string;
  /** Minutes east of UTC at the instant `ms`. */
  offsetAt(ms: number): number;
  /** The instant whose local wall time in this zone is `localMs` (wall time written as if it were UTC). */
  toUtc(localMs: number): number;
}

const zones = new Map<string, Zone>();

/** The zone of an IANA name; offsets come from Intl once per hour of time and are then remembered. */
export function zone(name: string): Zone {
  let z = zones.get(name);
  if (z) return z;
  const format = new Intl.DateTimeFormat('en-US', { timeZone: name, timeZoneName: 'longOffset' });
  const byHour = new Map<number, number>();
  const offsetAt = (ms: number): number => {
    const hour = Math.floor(ms / HOUR_MS);
    let minutes = byHour.get(hour);
    if (minutes === undefined) {
      const text =
        format.formatToParts(new Date(hour * HOUR_MS)).find((p) => p.type === 'timeZoneName')?.value ?? 'GMT';
      const m = /GMT([+-])(\d{2}):(\d{2})/.exec(text);
      minutes = m ? (m[1] === '-' ? -1 : 1) * (Number(m[2]) * 60 + Number(m[3])) : 0;
      byHour.set(hour, minutes);
    }
    return minutes;
  };
  z = {
    name,
    offsetAt,
    toUtc(localMs) {
      // The offset an hour either side of a change decides; a wall time skipped in spring reads as the later offset.
      const guess = localMs - offsetAt(localMs) * 60_000;
      return localMs - offsetAt(guess) * 60_000;
    },
  };
  zones.set(name, z);
  return z;
}

/** The company's own time zone: a zone with daylight saving time, so both -06:00 and -05:00 occur. */
export const COMPANY_ZONE: Zone = zone('America/Chicago');

const offsetOf = (ms: number, tz: number | Zone): number => (typeof tz === 'number' ? tz : tz.offsetAt(ms));

/**
 * `yyyy-MM-ddTHH:mm:ss±hh:mm`: the local wall time in a zone, or at a fixed `offsetMinutes` from UTC.
 * Built from character codes so V8 stores it as one flat string; concatenation would keep a rope of slices,
 * which costs several times the memory across a million shift assignments.
 */
export function dateTime(ms: number, tz: number | Zone): string {
  const offsetMinutes = offsetOf(ms, tz);
  const local = ms + offsetMinutes * 60_000;
  const days = Math.floor(local / DAY_MS);
  let secs = Math.floor((local - days * DAY_MS) / 1000);
  const [y, m, d] = civilFromDays(days);
  const hh = Math.floor(secs / 3600);
  secs -= hh * 3600;
  const mm = Math.floor(secs / 60);
  const ss = secs - mm * 60;
  const abs = Math.abs(offsetMinutes);
  const c = CODES;
  put4(c, 0, y);
  c[4] = 45;
  put2(c, 5, m);
  c[7] = 45;
  put2(c, 8, d);
  c[10] = 84;
  put2(c, 11, hh);
  c[13] = 58;
  put2(c, 14, mm);
  c[16] = 58;
  put2(c, 17, ss);
  c[19] = offsetMinutes < 0 ? 45 : 43;
  put2(c, 20, Math.floor(abs / 60));
  c[22] = 58;
  put2(c, 23, abs % 60);
  return String.fromCharCode.apply(null, c);
}

const CODES: number[] = new Array<number>(25).fill(48);

function put2(c: number[], at: number, n: number): void {
  c[at] = 48 + Math.floor(n / 10);
  c[at + 1] = 48 + (n % 10);
}

function put4(c: number[], at: number, n: number): void {
  put2(c, at, Math.floor(n / 100));
  put2(c, at + 2, n % 100);
}

/** Year, month, day of a day number (H. Hinnant's civil_from_days). */
function civilFromDays(z0: number): [number, number, number] {
  const z = z0 + 719468;
  const era = Math.floor(z / 146097);
  const doe = z - era * 146097;
  const yoe = Math.floor((doe - Math.floor(doe / 1460) + Math.floor(doe / 36524) - Math.floor(doe / 146096)) / 365);
  const doy = doe - (365 * yoe + Math.floor(yoe / 4) - Math.floor(yoe / 100));
  const mp = Math.floor((5 * doy + 2) / 153);
  const d = doy - Math.floor((153 * mp + 2) / 5) + 1;
  const m = mp < 10 ? mp + 3 : mp - 9;
  return [yoe + era * 400 + (m <= 2 ? 1 : 0), m, d];
}

/** Shares one string per (instant, offset): every crew of a shift starts at the same time. */
export class TimeTexts {
  private readonly byOffset = new Map<number, Map<number, string>>();

  at(ms: number, tz: number | Zone): string {
    const offsetMinutes = offsetOf(ms, tz);
    let cache = this.byOffset.get(offsetMinutes);
    if (!cache) {
      cache = new Map();
      this.byOffset.set(offsetMinutes, cache);
    }
    let text = cache.get(ms);
    if (text === undefined) {
      text = dateTime(ms, offsetMinutes);
      cache.set(ms, text);
    }
    return text;
  }
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
