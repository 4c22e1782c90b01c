import type { AssignmentChange, Individual, ShiftAssignment } from '../source/schemas/index.ts';
import { RIDE_ALONG_GUESTS, VEHICLES } from './names.ts';
import { personRef } from './records.ts';
import type { Rng } from './rng.ts';
import type { Assignee, ScheduleDef, SandboxStore } from './store.ts';
import { COMPANY_ZONE, DAY_MS, HOUR_MS, type Zone } from './time.ts';

/** Who can be scheduled: active employees, by primary job title. */
export interface Pools {
  byTitle: Map<number, Individual[]>;
  everyone: Individual[];
}

export function poolsOf(store: SandboxStore): Pools {
  const byTitle = new Map<number, Individual[]>();
  const everyone: Individual[] = [];
  for (const ind of store.individuals.values()) {
    if (ind.Status !== 'Active' || ind.IsEmployee !== 1) continue;
    everyone.push(ind);
    const list = byTitle.get(ind.JobTitleId ?? 0);
    if (list) list.push(ind);
    else byTitle.set(ind.JobTitleId ?? 0, [ind]);
  }
  return { byTitle, everyone };
}

/** A newly scheduled slot; `open` slots have no assignee yet. */
export interface Slot {
  rec: ShiftAssignment;
  startMs: number;
  endMs: number;
  zone: Zone;
}

export function slotsPerDay(store: SandboxStore): number {
  return store.schedules.reduce((n, s) => n + s.shifts.reduce((m, sh) => m + sh.slots, 0), 0);
}

/**
 * The assignments of one local calendar day across all schedules. `factor` scales each shift's crew count
 * so the dataset reaches its size; `openShare` is the share left open (higher for days far ahead).
 */
export function scheduleDay(store: SandboxStore, rng: Rng, pools: Pools, plan: DayPlan): Slot[] {
  const slots: Slot[] = [];
  for (const schedule of store.schedules) {
    for (const shift of schedule.shifts) {
      const n = rng.count(shift.slots * plan.factor);
      const place = { schedule, shift };
      for (let k = 0; k < n; k++) slots.push(makeSlot(store, rng, pools, plan, place));
    }
  }
  return slots;
}

/** The local calendar day a schedule is made for, how its crews are scaled, and the share of slots left open. */
export interface DayPlan {
  day: number;
  factor: number;
  openShare: number;
}

function makeSlot(
  store: SandboxStore,
  rng: Rng,
  pools: Pools,
  { day, openShare }: DayPlan,
  { schedule, shift }: { schedule: ScheduleDef; shift: ScheduleDef['shifts'][number] },
): Slot {
  const zone = schedule.locale.zone;
  const startMs = zone.toUtc(day * DAY_MS + shift.startHour * HOUR_MS);
  const endMs = startMs + shift.hours * HOUR_MS;
  const rideAlong = rng.chance(0.03);
  const title = store.jobTitleById(shift.jobTitleId);
  let assignee: Assignee | null;
  if (rideAlong) assignee = rng.chance(0.4) ? guest(rng) : pickPerson(store, rng, pools.everyone);
  else assignee = rng.chance(openShare) ? null : pickPerson(store, rng, pools.byTitle.get(shift.jobTitleId) ?? []);
  const rec: ShiftAssignment = {
    ShiftAssignmentId: 3_000_000 + ++store.next.assignment,
    ScheduleId: schedule.record.ScheduleId,
    ScheduleName: schedule.record.ScheduleName ?? null,
    ShiftId: shift.ShiftId,
    ShiftName: shift.ShiftName,
    JobTitleId: shift.jobTitleId,
    JobTitleName: title?.record.JobTitleName ?? null,
    StartDateTime: store.shiftTimes.at(startMs, zone),
    EndDateTime: store.shiftTimes.at(endMs, zone),
    Type: rideAlong ? 'Ride Along' : 'Shift Assignment',
    Assignee: assignee,
    VehicleName: rng.chance(0.7) ? rng.pick(VEHICLES) : null,
    ClockInDateTime: null,
    ClockOutDateTime: null,
  };
  return { rec, startMs, endMs, zone };
}

const guests = new Map<string, Assignee>();

/** A non-employee ride-along guest: no ServiceId, no EmployeeNumber (service-spec.md, ShiftAssignmentAssignee). */
export function guest(rng: Rng): Assignee {
  const g = rng.pick(RIDE_ALONG_GUESTS);
  const key = `${g.first} ${g.last}`;
  let ref = guests.get(key);
  if (!ref) {
    ref = { ServiceId: null, EmployeeNumber: null, FirstName: g.first, LastName: g.last };
    guests.set(key, ref);
  }
  return ref;
}

export function pickPerson(store: SandboxStore, rng: Rng, pool: readonly Individual[]): Assignee | null {
  return pool.length === 0 ? null : personRef(store, rng.pick(pool));
}

/** A change record of an assignment; `stamp` is the EventTimeStamp text, already in the schedule's zone. */
export function changeOf(
  a: ShiftAssignment,
  eventType: AssignmentChange['EventType'],
  stamp: string,
  assignee: Assignee | null,
): AssignmentChange {
  return {
    EventType: eventType,
    EventTimeStamp: stamp,
    ShiftAssignmentId: a.ShiftAssignmentId,
    ScheduleId: a.ScheduleId ?? null,
    ScheduleName: a.ScheduleName ?? null,
    ShiftId: a.ShiftId ?? null,
    ShiftName: a.ShiftName ?? null,
    JobTitleId: a.JobTitleId ?? null,
    JobTitleName: a.JobTitleName ?? null,
    StartDateTime: a.StartDateTime,
    EndDateTime: a.EndDateTime ?? null,
    Type: a.Type ?? null,
    Assignee: assignee,
  };
}

export function zoneOfSchedule(store: SandboxStore, scheduleId: number | null | undefined): Zone {
  return store.schedules.find((s) => s.record.ScheduleId === scheduleId)?.locale.zone ?? COMPANY_ZONE;
}
