import type { Individual, TimeOffRequest } from '../source/schemas/index.ts';
import { LEAVE_POLICIES } from './names.ts';
import { timeOffEmployee } from './records.ts';
import type { Rng } from './rng.ts';
import type { SandboxStore, TimeOffEntry } from './store.ts';
import { COMPANY_ZONE, DAY_MS, HOUR_MS, dateTime, type Zone } from './time.ts';

/** The time zone of an individual's locale, or the company's. */
export function zoneOf(store: SandboxStore, ind: Individual): Zone {
  return store.localeByName(ind.Locale)?.zone ?? COMPANY_ZONE;
}

/** A time off request starting at `startMs`, requested at `requestedMs`, still pending. */
export function makeTimeOff(
  store: SandboxStore,
  rng: Rng,
  ind: Individual,
  startMs: number,
  requestedMs: number,
): TimeOffEntry {
  const zone = zoneOf(store, ind);
  const days = rng.chance(0.2) ? 0 : rng.int(1, 5);
  const hours = days === 0 ? rng.pick([2, 4, 6]) : days * rng.pick([8, 12]);
  const endMs = days === 0 ? startMs + hours * HOUR_MS : startMs + days * DAY_MS - 60_000;
  const policy = rng.pick(LEAVE_POLICIES);
  const rec: TimeOffRequest = {
    Employee: timeOffEmployee(ind),
    StartDateTime: dateTime(startMs, zone),
    EndDateTime: dateTime(endMs, zone),
    RequestedLeavePolicy: policy.policy,
    RequestedLeaveType: rng.pick(policy.types),
    ApprovedHours: null,
    RequestedDateTime: dateTime(requestedMs, zone),
    Status: 'Pending',
    ReviewedBy: null,
    ReviewedDateTime: null,
    RequestedHours: hours,
  };
  return { seq: ++store.next.timeOff, serviceId: ind.ServiceId, startMs, endMs, rec };
}

/** The request after a supervisor's decision at `atMs`; approved hours may be split across two policies. */
/** A supervisor's decision on a request: what it was, who made it, and when. */
export interface Decision {
  status: 'Approved' | 'Denied' | 'Canceled';
  reviewer: Individual | undefined;
  atMs: number;
}

export function decide(
  store: SandboxStore,
  rng: Rng,
  entry: TimeOffEntry,
  { status, reviewer, atMs }: Decision,
): TimeOffRequest {
  const r = entry.rec;
  const requester = store.individual(entry.serviceId);
  const zone = requester ? zoneOf(store, requester) : COMPANY_ZONE;
  const hours = r.RequestedHours ?? 0;
  let approved: TimeOffRequest['ApprovedHours'] = [];
  if (status === 'Approved') {
    const split = hours >= 8 && rng.chance(0.1);
    const fallback = LEAVE_POLICIES[2] ?? { policy: 'Unpaid Leave', types: ['Unpaid Personal'] };
    approved = split
      ? [
          {
            ApprovedLeavePolicy: r.RequestedLeavePolicy ?? null,
            ApprovedLeaveType: r.RequestedLeaveType ?? null,
            ApprovedHours: hours / 2,
          },
          {
            ApprovedLeavePolicy: fallback.policy,
            ApprovedLeaveType: fallback.types[0] ?? null,
            ApprovedHours: hours / 2,
          },
        ]
      : [
          {
            ApprovedLeavePolicy: r.RequestedLeavePolicy ?? null,
            ApprovedLeaveType: r.RequestedLeaveType ?? null,
            ApprovedHours: hours,
          },
        ];
  }
  const reviewed = status !== 'Canceled';
  return {
    ...r,
    ApprovedHours: status === 'Canceled' ? null : approved,
    Status: status,
    ReviewedBy: reviewed && reviewer ? timeOffEmployee(reviewer) : null,
    ReviewedDateTime: reviewed ? dateTime(atMs, zone) : null,
  };
}

/** Keeps the request list in (start, seq) order, the order pages are served in. */
export function insertTimeOff(store: SandboxStore, entry: TimeOffEntry): void {
  const list = store.timeOff;
  let i = list.length;
  while (i > 0 && (list[i - 1] as TimeOffEntry).startMs > entry.startMs) i--;
  list.splice(i, 0, entry);
}
