import type { Individual, ShiftAssignment } from '../source/schemas/index.ts';
import { withOutcome } from './courses.ts';
import { FIRST_NAMES, LAST_NAMES, VEHICLES } from './names.ts';
import { add, randomOf, type Advance } from './advance.ts';
import { refreshCertsOf, refreshSupervised } from './records.ts';
import type { Rng } from './rng.ts';
import { zoneOfSchedule } from './scheduling.ts';
import type { DayBucket, SandboxStore } from './store.ts';
import { DAY_MS, dateOfDay, dateOnly, dateTime, dayOf, parseInstant } from './time.ts';
import { decide } from './time-off.ts';

/**
 * Changes the real service makes that leave no signal a reader can filter on: no change record, no newer
 * UpdateDate, nothing inside a recent window. A sync that trusts only its signals misses them; the sandbox
 * makes them so that a sync's periodic complete re-reads are put to the test.
 * Rates are per 100 individuals per day, or per day relative to the day's assignments or the forms' daily volume.
 */
export const QUIET_RATES = {
  renames: 0.15,
  jobTitleChanges: 0.1,
  localeChanges: 0.06,
  identifierChanges: 0.05,
  returns: 0.06,
  /** Decisions on requests that started more than 30 days ago; half of them more than a year ago. */
  lateTimeOffDecisions: 0.1,
  /** On course records that started more than 60 days ago. */
  oldCourseChanges: 0.1,
  courseDeletions: 0.05,
  /** Shares of a day's assignments. */
  assignmentTimeChanges: 0.004,
  vehicleChanges: 0.006,
  clockCorrections: 0.003,
  movesToPastDay: 0.002,
  /** Schedule or shift renames per day, for the whole company. */
  scheduleRenames: 0.15,
  /** Shares of the forms' and runs' daily volume. */
  formDeletions: 0.05,
  runLogDeletions: 0.05,
} as const;

export const QUIET_KINDS = [
  'individualsRenamed',
  'jobTitleChanges',
  'localeChanges',
  'identifierChanges',
  'individualsReturned',
  'timeOffLateDecisions',
  'courseStatusChanges',
  'coursesDeleted',
  'assignmentTimesChanged',
  'vehiclesChanged',
  'clockCorrections',
  'assignmentsMovedToPastDay',
  'schedulesRenamed',
  'shiftsRenamed',
  'formResponsesDeleted',
  'runLogResponsesDeleted',
] as const;

/** Individuals change names, titles, locales and keys, and come back; their credentials keep their UpdateDate. */
export function quietPeople(store: SandboxStore, rng: Rng, p: Advance, perDay: number): void {
  const everyone = [...store.individuals.values()];
  const current = (i: Individual) => store.individual(i.ServiceId) === i;
  const listed = (i: Individual) => current(i) && i.Status !== 'Former';
  const apply = (
    kind: string,
    rate: number,
    keep: (i: Individual) => boolean,
    change: (i: Individual) => Individual | undefined,
  ) => {
    for (let n = rng.count(rate * perDay * p.days); n > 0; n--) {
      const ind = randomOf(rng, everyone, keep);
      const next = ind && change(ind);
      if (!ind || !next) continue;
      store.putIndividual(next);
      // The credential list shows the holder's current names, titles and business unit; UpdateDate stays.
      refreshCertsOf(store, next);
      refreshSupervised(store, next);
      add(p, kind);
    }
  };
  apply('individualsRenamed', QUIET_RATES.renames, listed, (i) => {
    const last = rng.pick(LAST_NAMES);
    if (rng.chance(0.75)) return { ...i, LastName: last, LegalLastName: i.LegalLastName == null ? null : last };
    const first = rng.pick(FIRST_NAMES);
    return { ...i, FirstName: first, LegalFirstName: i.LegalFirstName == null ? null : first };
  });
  apply('jobTitleChanges', QUIET_RATES.jobTitleChanges, listed, (i) => {
    const title = rng.pick(store.jobTitles.filter((t) => t.record.JobTitleId !== i.JobTitleId));
    return { ...i, JobTitleId: title.record.JobTitleId, JobTitle: title.record.JobTitleName ?? null };
  });
  apply('localeChanges', QUIET_RATES.localeChanges, listed, (i) => {
    const locale = rng.pick(store.locales.filter((l) => l.record.LocaleName !== i.Locale));
    return { ...i, Locale: locale.record.LocaleName ?? null };
  });
  apply('identifierChanges', QUIET_RATES.identifierChanges, listed, (i) => {
    const k = ++store.next.identifier;
    return rng.chance(0.5)
      ? { ...i, EmployeeNumber: String(800_000 + k) }
      : { ...i, UniqueNumber: `UR${String(k).padStart(7, '0')}` };
  });
  apply(
    'individualsReturned',
    QUIET_RATES.returns,
    (i) => current(i) && i.Status === 'Former',
    (i) => ({ ...i, Status: 'Active', HireDate: dateOnly(p.toMs) }),
  );
}

/** Supervisors decide, or cancel, requests that started long ago: more than 30 days, often more than a year. */
export function lateTimeOff(store: SandboxStore, rng: Rng, p: Advance, perDay: number): void {
  const monthAgo = p.toMs - 30 * DAY_MS;
  const yearAgo = p.toMs - 366 * DAY_MS;
  const supervisors = [...store.individuals.values()].filter((i) => i.IsSupervisor === 1 && i.Status === 'Active');
  const old = store.timeOff.filter(
    (e) => e.startMs < monthAgo && (e.rec.Status === 'Pending' || e.rec.Status === 'Approved'),
  );
  const veryOld = old.filter((e) => e.startMs < yearAgo);
  for (let n = rng.count(QUIET_RATES.lateTimeOffDecisions * perDay * p.days); n > 0; n--) {
    const pool = veryOld.length > 0 && rng.chance(0.5) ? veryOld : old;
    const e = randomOf(rng, pool, (x) => x.rec.Status === 'Pending' || x.rec.Status === 'Approved');
    if (!e) continue;
    const r = rng.next();
    const status = e.rec.Status === 'Approved' ? 'Canceled' : r < 0.7 ? 'Approved' : r < 0.9 ? 'Denied' : 'Canceled';
    e.rec = decide(store, rng, e, {
      status,
      reviewer: supervisors.length > 0 ? rng.pick(supervisors) : undefined,
      atMs: p.at(),
    });
    add(p, 'timeOffLateDecisions');
  }
}

/** Old course records change status (a late approval, a revoked pass) or are deleted. */
export function oldCourses(store: SandboxStore, rng: Rng, p: Advance, perDay: number): void {
  const cutoff = dateOfDay(dayOf(p.toMs) - 60);
  const old = () => {
    // Courses are kept in StartDate order: the old ones are a prefix.
    let end = 0;
    while (end < store.courses.length && (store.courses[end]!.rec.StartDate ?? '') < cutoff) end++;
    return end;
  };
  for (let n = rng.count(QUIET_RATES.oldCourseChanges * perDay * p.days); n > 0; n--) {
    const end = old();
    if (end === 0) break;
    const i = rng.int(0, end - 1);
    const e = store.courses[i]!;
    const outcome =
      e.outcome === 'inProgress'
        ? rng.chance(0.8)
          ? 'succeeded'
          : 'failed'
        : e.outcome === 'succeeded'
          ? 'failed'
          : 'succeeded';
    store.courses[i] = withOutcome(e, outcome);
    add(p, 'courseStatusChanges');
  }
  for (let n = rng.count(QUIET_RATES.courseDeletions * perDay * p.days); n > 0; n--) {
    const end = old();
    if (end === 0) break;
    store.courses.splice(rng.int(0, end - 1), 1);
    add(p, 'coursesDeleted');
  }
}

/** Assignment edits that write no change record. */
export function quietAssignments(store: SandboxStore, rng: Rng, p: Advance, perDayAssignments: number): void {
  const today = dayOf(p.toMs);
  const times = (rate: number) => rng.count(perDayAssignments * rate * p.days);
  const pickIn = (from: number, to: number, keep: (a: ShiftAssignment) => boolean = () => true) => {
    for (let tries = 0; tries < 40; tries++) {
      const day = rng.int(from, to);
      const b = store.days.get(day);
      if (!b || b.items.length === 0) continue;
      const i = rng.int(0, b.items.length - 1);
      if (keep(b.items[i]!)) return { b, i, a: b.items[i]! };
    }
    return undefined;
  };
  for (let n = times(QUIET_RATES.assignmentTimeChanges); n > 0; n--) {
    const hit = pickIn(today - 3, store.horizonDay);
    if (!hit) continue;
    const shift = rng.pick([-60, -30, 30, 60]) * 60_000;
    const startMs = hit.b.starts[hit.i]! + (rng.chance(0.5) ? shift : 0);
    const endMs = parseInstant(hit.a.EndDateTime) + shift;
    moveAssignment(store, hit.b, hit.i, startMs, endMs);
    add(p, 'assignmentTimesChanged');
  }
  for (let n = times(QUIET_RATES.vehicleChanges); n > 0; n--) {
    const hit = pickIn(today - 7, store.horizonDay);
    if (!hit) continue;
    const vehicle = rng.chance(0.1) ? null : rng.pick(VEHICLES.filter((v) => v !== hit.a.VehicleName));
    hit.b.items[hit.i] = { ...hit.a, VehicleName: vehicle };
    add(p, 'vehiclesChanged');
  }
  for (let n = times(QUIET_RATES.clockCorrections); n > 0; n--) {
    const hit = pickIn(today - 45, today - 2, (a) => a.ClockInDateTime != null && a.ClockOutDateTime != null);
    if (!hit) continue;
    const zone = zoneOfSchedule(store, hit.a.ScheduleId);
    const delta = rng.int(5, 45) * 60_000 * (rng.chance(0.5) ? 1 : -1);
    const corrected = rng.chance(0.5)
      ? { ClockOutDateTime: dateTime(parseInstant(hit.a.ClockOutDateTime) + delta, zone) }
      : { ClockInDateTime: dateTime(parseInstant(hit.a.ClockInDateTime) + delta, zone) };
    hit.b.items[hit.i] = { ...hit.a, ...corrected };
    add(p, 'clockCorrections');
  }
  for (let n = times(QUIET_RATES.movesToPastDay); n > 0; n--) {
    // One not clocked into yet, so its clock times need not move with it.
    const hit = pickIn(today - 1, today + 14, (a) => a.ClockInDateTime == null);
    if (!hit) continue;
    const startMs = hit.b.starts[hit.i]!;
    const days = dayOf(startMs) - today + rng.int(2, 10);
    const zone = zoneOfSchedule(store, hit.a.ScheduleId);
    // Same local wall time, `days` earlier.
    const local = (ms: number) => ms + zone.offsetAt(ms) * 60_000;
    const newStart = zone.toUtc(local(startMs) - days * DAY_MS);
    const newEnd = newStart + (parseInstant(hit.a.EndDateTime) - startMs);
    moveAssignment(store, hit.b, hit.i, newStart, newEnd);
    add(p, 'assignmentsMovedToPastDay');
  }
  for (let n = rng.count(QUIET_RATES.scheduleRenames * p.days); n > 0; n--) renameSchedule(store, rng, p);
}

/** New start and end for an assignment: it leaves its place and is put where its new start belongs. */
function moveAssignment(store: SandboxStore, b: DayBucket, i: number, startMs: number, endMs: number): void {
  const a = b.items[i]!;
  const zone = zoneOfSchedule(store, a.ScheduleId);
  b.items.splice(i, 1);
  b.starts.splice(i, 1);
  store.insertAssignment({ ...a, StartDateTime: dateTime(startMs, zone), EndDateTime: dateTime(endMs, zone) }, startMs);
}

const UNIT_WORDS = ['Medic', 'Unit', 'Rescue', 'Car', 'Truck'] as const;

/** A schedule or one of its shifts gets a new name; every assignment of it, past and future, shows the new name. */
function renameSchedule(store: SandboxStore, rng: Rng, p: Advance): void {
  const index = rng.int(0, store.schedules.length - 1);
  const def = store.schedules[index]!;
  const tag = `${rng.pick(UNIT_WORDS)} ${rng.int(1, 99)}`;
  if (rng.chance(0.3)) {
    const ScheduleName = `${(def.record.ScheduleName ?? 'Schedule').replace(/ \(.*\)$/, '')} (${tag})`;
    store.schedules[index] = { ...def, record: { ...def.record, ScheduleName } };
    rewriteAssignments(store, (a) => (a.ScheduleId === def.record.ScheduleId ? { ...a, ScheduleName } : a));
    add(p, 'schedulesRenamed');
    return;
  }
  const k = rng.int(0, def.shifts.length - 1);
  const shift = def.shifts[k]!;
  const ShiftName = `${shift.ShiftName.replace(/ \(.*\)$/, '')} (${tag})`;
  const shifts = def.shifts.map((s, j) => (j === k ? { ...s, ShiftName } : s));
  const Shifts = (def.record.Shifts ?? []).map((s) => (s.ShiftId === shift.ShiftId ? { ...s, ShiftName } : s));
  store.schedules[index] = { ...def, shifts, record: { ...def.record, Shifts } };
  rewriteAssignments(store, (a) => (a.ShiftId === shift.ShiftId ? { ...a, ShiftName } : a));
  add(p, 'shiftsRenamed');
}

function rewriteAssignments(store: SandboxStore, change: (a: ShiftAssignment) => ShiftAssignment): void {
  for (const b of store.days.values()) for (let i = 0; i < b.items.length; i++) b.items[i] = change(b.items[i]!);
}

/** Form responses and run-log form responses are deleted: they leave every list. Their audit rows stay. */
export function deleteResponses(
  store: SandboxStore,
  rng: Rng,
  p: Advance,
  formsPerDay: number,
  runsPerDay: number,
): void {
  const forms = [...store.responses.values()].filter((list) => list.length > 0);
  for (let n = rng.count(formsPerDay * QUIET_RATES.formDeletions * p.days); n > 0 && forms.length > 0; n--) {
    const list = rng.pick(forms);
    if (list.length === 0) continue;
    list.splice(rng.int(0, list.length - 1), 1);
    add(p, 'formResponsesDeleted');
  }
  for (
    let n = rng.count(runsPerDay * QUIET_RATES.runLogDeletions * p.days);
    n > 0 && store.runLogResponses.length > 0;
    n--
  ) {
    store.runLogResponses.splice(rng.int(0, store.runLogResponses.length - 1), 1);
    add(p, 'runLogResponsesDeleted');
  }
}
