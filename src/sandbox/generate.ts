import type { AssignmentChange, Individual } from '../source/schemas/index.ts';
import { makeCourse } from './courses.ts';
import { buildForms } from './forms.ts';
import { makeCertsFor, makeIndividual, withSupervisor } from './people.ts';
import { buildReference } from './reference.ts';
import { makeFormResponse, makeRun } from './responses.ts';
import type { Rng } from './rng.ts';
import { changeOf, pickPerson, poolsOf, scheduleDay, slotsPerDay, type Pools, type Slot } from './scheduling.ts';
import type { Assignee, DayBucket, SandboxStore } from './store.ts';
import { DAY_MS, HOUR_MS, dateTime as fmt, dayOf } from './time.ts';
import { decide, makeTimeOff, zoneOf } from './time-off.ts';

export type SandboxSize = 'tiny' | 'small' | 'medium' | 'large';

export interface SizeProfile {
  individuals: number;
  /** Days of schedules before the clock's day, and days published ahead of it. */
  historyDays: number;
  futureDays: number;
  assignmentsPerDay: number;
  formResponses: number;
  runs: number;
}

/** large reaches 20,000 individuals and about 1,070,000 shift assignments (2,700 a day over 396 days). */
export const SIZES: Readonly<Record<SandboxSize, SizeProfile>> = {
  tiny: { individuals: 50, historyDays: 30, futureDays: 14, assignmentsPerDay: 24, formResponses: 40, runs: 30 },
  small: { individuals: 500, historyDays: 90, futureDays: 28, assignmentsPerDay: 160, formResponses: 400, runs: 300 },
  medium: {
    individuals: 5_000,
    historyDays: 365,
    futureDays: 30,
    assignmentsPerDay: 650,
    formResponses: 4_000,
    runs: 3_000,
  },
  large: {
    individuals: 20_000,
    historyDays: 365,
    futureDays: 30,
    assignmentsPerDay: 2_700,
    formResponses: 10_000,
    runs: 8_000,
  },
};

/** Shares that make the data messy the way real data is. */
const FORMER_SHARE = 0.09;
const LOA_SHARE = 0.05;
const TIME_OFF_PER_YEAR = 5;
const COURSES_PER_YEAR = 4;

export function generate(store: SandboxStore, rng: Rng, size: SizeProfile): void {
  buildReference(store);
  buildForms(store);
  generatePeople(store, rng.fork('people'), size);
  const pools = poolsOf(store);
  generateAssignments(store, rng.fork('assignments'), pools, size);
  generateTimeOff(store, rng.fork('timeoff'), size);
  generateCourses(store, rng.fork('courses'), size);
  generateForms(store, rng.fork('forms'), pools, size);
  store.bump();
}

function generatePeople(store: SandboxStore, rng: Rng, size: SizeProfile): void {
  const today = dayOf(store.nowMs);
  const people: Individual[] = [];
  for (let i = 0; i < size.individuals; i++) {
    // The first people cover every job title, so even a tiny roster can staff every shift.
    const title = i < store.jobTitles.length ? store.jobTitles[i] : undefined;
    const r = rng.next();
    const status =
      i < store.jobTitles.length || r >= FORMER_SHARE + LOA_SHARE ? 'Active' : r < FORMER_SHARE ? 'Former' : 'LOA';
    const hireDay = rng.chance(0.92) ? today - rng.int(30, 25 * 365) : null;
    const base = makeIndividual(store, rng, { status, hireDay, seq: store.next.individual++, title });
    const isSupervisor = base.JobTitle === 'Field Supervisor' || i < 2 || rng.chance(0.03);
    people.push({ ...base, IsSupervisor: isSupervisor ? 1 : 0 });
  }
  const supervisors = people.filter((p) => p.IsSupervisor === 1 && p.Status === 'Active');
  for (const p of people) store.putIndividual(withSupervisor(p, supervisors, rng));
  for (const p of store.individuals.values()) makeCertsFor(store, rng, p);
  markPending(store, rng);
}

/** Recently updated credentials await verification; some already failed it. */
function markPending(store: SandboxStore, rng: Rng): void {
  const recent = new Date(store.nowMs - 45 * DAY_MS).toISOString().slice(0, 10);
  for (const c of store.certs.values()) {
    if (c.IsDeleted || (c.UpdateDate ?? '') < recent || !rng.chance(0.3)) continue;
    const failed = rng.chance(0.15);
    store.pending.set(c.IndividualCertificationId, {
      VerificationStatus: failed ? 'Failed' : rng.chance(0.7) ? 'Pending' : 'In Progress',
      IssuingBodyFailureReason: failed
        ? [rng.pick(['Name on card does not match', 'Card number not found', 'Card expired'])]
        : null,
    });
  }
}

interface ChangeLog {
  recs: AssignmentChange[];
  times: number[];
}

/** Where the past's assignments are placed: the store, the draws, the people to assign, and their change records. */
interface HistoryScene {
  store: SandboxStore;
  rng: Rng;
  pools: Pools;
  log: ChangeLog;
}

function generateAssignments(store: SandboxStore, rng: Rng, pools: Pools, size: SizeProfile): void {
  const today = dayOf(store.nowMs);
  const factor = size.assignmentsPerDay / slotsPerDay(store);
  const log: ChangeLog = { recs: [], times: [] };
  const scene: HistoryScene = { store, rng, pools, log };
  store.horizonDay = today + size.futureDays;
  for (let day = today - size.historyDays; day <= store.horizonDay; day++) {
    const ahead = Math.max(0, day - today) / size.futureDays;
    const publishedMs = Math.min((day - size.futureDays) * DAY_MS + rng.int(0, 20) * HOUR_MS, store.nowMs - 60_000);
    for (const slot of scheduleDay(store, rng, pools, { day, factor, openShare: 0.05 + 0.15 * ahead })) {
      placeHistoricSlot(scene, slot, publishedMs);
    }
  }
  for (const b of store.days.values()) sortBucket(b);
  const order = Array.from(log.times.keys()).sort(
    (a, b) => (log.times[a] as number) - (log.times[b] as number) || a - b,
  );
  for (const i of order) store.addChange(log.recs[i] as AssignmentChange, log.times[i] as number);
}

function sortBucket(b: DayBucket): void {
  const order = Array.from(b.items.keys()).sort(
    (x, y) =>
      (b.starts[x] as number) - (b.starts[y] as number) ||
      (b.items[x]?.ShiftAssignmentId ?? 0) - (b.items[y]?.ShiftAssignmentId ?? 0),
  );
  b.items = order.map((i) => b.items[i]!);
  b.starts = order.map((i) => b.starts[i]!);
}

function between(rng: Rng, a: number, b: number): number {
  return b > a ? a + Math.floor(rng.next() * (b - a)) : a + 1000;
}

/**
 * Stores a slot as it stands at the clock's time: clocked in and out if it has passed, with the change
 * records that led to its current assignee. A few slots were deleted after creation.
 */
function placeHistoricSlot({ store, rng, pools, log }: HistoryScene, slot: Slot, createdMs: number): void {
  const { rec, startMs, zone } = slot;
  const emit = (type: AssignmentChange['EventType'], at: number, who: Assignee | null) => {
    // A day's schedule is published at one instant, so its Created stamps share one string.
    const stamp = type === 'Created' ? store.shiftTimes.at(at, zone) : fmt(at, zone);
    log.recs.push(changeOf(rec, type, stamp, who));
    log.times.push(at);
  };
  const lastMs = Math.min(startMs, store.nowMs);
  const final = rec.Assignee ?? null;
  if (rng.chance(0.007)) {
    emit('Created', createdMs, final);
    emit('Deleted', between(rng, createdMs, lastMs), null);
    return;
  }
  const other = rec.Type === 'Ride Along' ? null : pickPerson(store, rng, pools.byTitle.get(rec.JobTitleId ?? 0) ?? []);
  const r = rng.next();
  if (final === null) {
    if (r < 0.85 || !other) emit('Created', createdMs, null);
    else {
      emit('Created', createdMs, other);
      emit('Unassigned', between(rng, createdMs, lastMs), other);
    }
  } else if (r < 0.8 || !other) emit('Created', createdMs, final);
  else if (r < 0.92) {
    emit('Created', createdMs, null);
    emit('Assigned', between(rng, createdMs, lastMs), final);
  } else {
    const t1 = between(rng, createdMs, lastMs);
    emit('Created', createdMs, other);
    emit('Unassigned', t1, other);
    emit('Assigned', between(rng, t1, lastMs), final);
  }
  store.insertAssignmentUnsorted(clocked(store, rng, slot), startMs);
}

/** Past shifts of employees show their clock-in and clock-out; a shift under way is clocked in only. */
function clocked(store: SandboxStore, rng: Rng, slot: Slot) {
  const { rec, startMs, endMs, zone } = slot;
  if (rec.Assignee?.ServiceId == null || startMs > store.nowMs || !rng.chance(0.95)) return rec;
  const inMs = startMs + rng.int(-15, 10) * 60_000;
  if (inMs > store.nowMs) return rec;
  const outMs = endMs + rng.int(-5, 30) * 60_000;
  const out = outMs <= store.nowMs && rng.chance(0.99) ? fmt(outMs, zone) : null;
  return { ...rec, ClockInDateTime: fmt(inMs, zone), ClockOutDateTime: out };
}

function generateTimeOff(store: SandboxStore, rng: Rng, size: SizeProfile): void {
  const today = dayOf(store.nowMs);
  // Requests go back further than the schedules, past a year, so some that are decided late started long ago.
  const first = today - Math.max(size.historyDays, 365) - 120;
  const last = today + size.futureDays + 30;
  const byIndividualId = new Map<number, Individual>();
  for (const p of store.individuals.values()) byIndividualId.set(p.IndividualId, p);
  const supervisors = [...store.individuals.values()].filter((p) => p.IsSupervisor === 1);
  for (const ind of store.individuals.values()) {
    if (ind.IsEmployee !== 1) continue;
    const n = rng.count((TIME_OFF_PER_YEAR * (last - first)) / 365);
    for (let k = 0; k < n; k++) {
      const day = rng.int(first, last);
      const startMs = zoneOf(store, ind).toUtc(day * DAY_MS + (rng.chance(0.7) ? 0 : 7 * HOUR_MS));
      const requestedMs = Math.min(
        startMs - rng.int(2, 40) * DAY_MS + rng.int(0, 23) * HOUR_MS,
        store.nowMs - rng.int(1, 72) * HOUR_MS,
      );
      const entry = makeTimeOff(store, rng, ind, startMs, requestedMs);
      const r = rng.next();
      const future = startMs > store.nowMs;
      const status = future
        ? r < 0.5
          ? 'Pending'
          : r < 0.9
            ? 'Approved'
            : r < 0.95
              ? 'Denied'
              : 'Canceled'
        : r < 0.78
          ? 'Approved'
          : r < 0.86
            ? 'Denied'
            : r < 0.94
              ? 'Canceled'
              : 'Pending';
      if (status !== 'Pending') {
        const reviewer =
          (ind.SupervisorId != null ? byIndividualId.get(ind.SupervisorId) : undefined) ??
          (supervisors.length ? rng.pick(supervisors) : undefined);
        const reviewedMs = Math.min(requestedMs + rng.int(1, 120) * HOUR_MS, store.nowMs);
        entry.rec = decide(store, rng, entry, { status, reviewer, atMs: reviewedMs });
      }
      store.timeOff.push(entry);
    }
  }
  store.timeOff.sort((a, b) => a.startMs - b.startMs || a.seq - b.seq);
}

function generateCourses(store: SandboxStore, rng: Rng, size: SizeProfile): void {
  const today = dayOf(store.nowMs);
  for (const ind of store.individuals.values()) {
    // A year at least, so records older than any re-read window exist to change late.
    const days = Math.max(size.historyDays, 365);
    const n = rng.count((COURSES_PER_YEAR * days) / 365);
    for (let k = 0; k < n; k++) store.courses.push(makeCourse(store, rng, ind, rng.int(today - days, today), today));
  }
  store.courses.sort(
    (a, b) =>
      ((a.rec.StartDate ?? '') < (b.rec.StartDate ?? '')
        ? -1
        : (a.rec.StartDate ?? '') > (b.rec.StartDate ?? '')
          ? 1
          : 0) || (a.rec.IndividualCourseId < b.rec.IndividualCourseId ? -1 : 1),
  );
}

function generateForms(store: SandboxStore, rng: Rng, pools: Pools, size: SizeProfile): void {
  const from = store.nowMs - size.historyDays * DAY_MS;
  const to = store.nowMs - 6 * HOUR_MS;
  const people = pools.everyone;
  if (people.length === 0) return;
  const times = (n: number) => Array.from({ length: n }, () => between(rng, from, to)).sort((a, b) => a - b);
  for (const form of store.forms) store.responses.set(form.FormId, []);
  for (const startMs of times(size.formResponses)) {
    const form = rng.pick(store.forms);
    store.responses.get(form.FormId)?.push(makeFormResponse(store, rng, form, startMs, people));
  }
  const crewPool = people.filter((p) => p.JobTitle === 'Paramedic' || p.JobTitle === 'EMT');
  for (const runMs of times(size.runs)) store.runLogResponses.push(...makeRun(store, rng, runMs, people, crewPool));
  sortAudit(store, 0);
}

/** Audit rows are served in InsertDate order; rows appended since `from` are put in place, late ones among older rows. */
export function sortAudit(store: SandboxStore, from: number): void {
  if (store.audit.length - from <= 0) return;
  let min = Infinity;
  for (let i = from; i < store.audit.length; i++) min = Math.min(min, store.auditTimes[i] as number);
  let start = from;
  while (start > 0 && (store.auditTimes[start - 1] as number) > min) start--;
  from = start;
  const n = store.audit.length - from;
  if (n <= 1) return;
  const idx = Array.from({ length: n }, (_, i) => from + i).sort(
    (a, b) => (store.auditTimes[a] as number) - (store.auditTimes[b] as number) || a - b,
  );
  const rows = idx.map((i) => store.audit[i]!);
  const times = idx.map((i) => store.auditTimes[i]!);
  const forms = idx.map((i) => store.auditFormIds[i]!);
  for (let k = 0; k < n; k++) {
    store.audit[from + k] = rows[k]!;
    store.auditTimes[from + k] = times[k]!;
    store.auditFormIds[from + k] = forms[k]!;
  }
}
