import type { AssignmentChange, Individual, ShiftAssignment } from '../source/schemas/index.ts';
import type { ChangeSummary } from './service.ts';
import { add, randomOf, type Advance } from './advance.ts';
import { bound } from './queries.ts';
import { deleteResponses, lateTimeOff, oldCourses, QUIET_KINDS, quietAssignments, quietPeople } from './quiet.ts';
import { makeCourse } from './courses.ts';
import { sortAudit, type SizeProfile } from './generate.ts';
import { auditRows, type AnswerContext } from './forms.ts';
import { makeCertsFor, makeCore, makeIndividual, withSupervisor } from './people.ts';
import { certRecord, coreOf, requiredCertIds } from './records.ts';
import { editAnswers, editFormResponse, makeFormResponse, makeRun } from './responses.ts';
import type { Rng } from './rng.ts';
import { changeOf, zoneOfSchedule, pickPerson, poolsOf, scheduleDay, slotsPerDay, type Pools } from './scheduling.ts';
import type { Assignee, DayBucket, SandboxStore } from './store.ts';
import { DAY_MS, HOUR_MS, dateOnly, dateOfDay, dateTime, dayOf, latestStamp, parseInstant } from './time.ts';
import { decide, insertTimeOff, makeTimeOff, zoneOf } from './time-off.ts';

/**
 * The moving clock: `advance` moves the sandbox's time forward and applies the changes a real company makes in
 * that time, each stamped inside the stretch advanced. Volumes scale with the roster and the hours.
 * Rates are per 100 individuals per day unless named otherwise.
 */
const RATES = {
  hires: 0.3,
  statusChanges: 0.4,
  renewals: 2,
  deletions: 0.3,
  newCredentials: 0.5,
  timeOffRequests: 1.4,
  courses: 1.1,
  /** Share of the day's assignments reassigned, unassigned or deleted per day. */
  assignmentMoves: 0.03,
  assignmentDeletes: 0.004,
  /** Share of pending time off decided per day. */
  timeOffDecisions: 0.25,
  /** Form and run volumes per day relative to the generated history's daily average. */
  formEdits: 0.5,
  runEdits: 0.3,
} as const;

/** Every kind of change `advance` reports, so a summary always has the same keys. */
export const CHANGE_KINDS = [
  'individualsHired',
  'individualStatusChanges',
  'credentialRenewals',
  'credentialDeletions',
  'credentialsAdded',
  'assignmentsCreated',
  'assignmentsAssigned',
  'assignmentsUnassigned',
  'assignmentsDeleted',
  'clockIns',
  'clockOuts',
  'timeOffDecisions',
  'timeOffRequests',
  'coursesStarted',
  'formResponsesCreated',
  'formResponsesEdited',
  'runLogResponsesCreated',
  'runLogResponsesEdited',
  'auditRows',
  'lateChangeRecords',
  'lateAuditRows',
  ...QUIET_KINDS,
] as const;

/** Share of change records and audit rows stamped earlier than the moment they become visible. */
const LATE_SHARE = 0.05;

export function advance(store: SandboxStore, rng: Rng, size: SizeProfile, hours: number): ChangeSummary {
  const fromMs = store.nowMs;
  const toMs = fromMs + Math.max(0, hours) * HOUR_MS;
  store.nowMs = toMs;
  const counts: Record<string, number> = Object.fromEntries(CHANGE_KINDS.map((k) => [k, 0]));
  const span: Advance = {
    fromMs,
    toMs,
    days: hours / 24,
    counts,
    at: () => Math.min(fromMs + 1 + Math.floor(rng.next() * Math.max(1, toMs - fromMs)), latestStamp(toMs)),
  };
  if (hours > 0) {
    const perDay = store.individuals.size / 100;
    const auditFrom = store.audit.length;
    people(store, rng, span, perDay);
    quietPeople(store, rng, span, perDay);
    credentials(store, rng, span, perDay);
    const pools = poolsOf(store);
    assignments(store, rng, span, pools, size);
    quietAssignments(store, rng, span, size.assignmentsPerDay);
    timeOff(store, rng, span, perDay);
    lateTimeOff(store, rng, span, perDay);
    courses(store, rng, span, perDay);
    oldCourses(store, rng, span, perDay);
    forms(store, rng, span, pools, size);
    deleteResponses(store, rng, span, size.formResponses / size.historyDays, size.runs / size.historyDays);
    lateAudit(store, rng, span, auditFrom);
    sortAudit(store, auditFrom);
    counts.auditRows = store.audit.length - auditFrom;
    store.bump();
  }
  return { hours, now: new Date(toMs).toISOString(), counts };
}

/** New hires (with fresh credentials) and status moves along Active → LOA → Former. */
function people(store: SandboxStore, rng: Rng, p: Advance, perDay: number): void {
  const everyone = [...store.individuals.values()];
  const supervisors = everyone.filter((i) => i.IsSupervisor === 1 && i.Status === 'Active');
  for (let n = rng.count(RATES.hires * perDay * p.days); n > 0; n--) {
    const hire = makeIndividual(store, rng, { status: 'Active', hireDay: dayOf(p.at()), seq: store.next.individual++ });
    const ind = withSupervisor(hire, supervisors, rng);
    store.putIndividual(ind);
    makeCertsFor(store, rng, ind, true);
    add(p, 'individualsHired');
  }
  for (let n = rng.count(RATES.statusChanges * perDay * p.days); n > 0; n--) {
    const ind = randomOf(rng, everyone, (i) => i.Status !== 'Former' && store.individual(i.ServiceId) === i);
    if (!ind) break;
    const next = ind.Status === 'LOA' ? (rng.chance(0.5) ? 'Active' : 'Former') : rng.chance(0.6) ? 'LOA' : 'Former';
    store.putIndividual({ ...ind, Status: next });
    add(p, 'individualStatusChanges');
  }
}

/** Renewals (new ExpirationDate, UpdateDate the new clock date), deletions and newly entered credentials. */
function credentials(store: SandboxStore, rng: Rng, p: Advance, perDay: number): void {
  const today = dateOnly(p.toMs);
  const ids = [...store.certs.keys()];
  const live = (id: number) => {
    const c = store.certs.get(id);
    return c !== undefined && !c.IsDeleted && (store.individual(c.ServiceId ?? 0)?.Status ?? 'Former') !== 'Former';
  };
  for (let n = rng.count(RATES.renewals * perDay * p.days); n > 0; n--) {
    const id = randomOf(rng, ids, (i) => live(i) && store.certs.get(i)?.ExpirationDate != null);
    const c = id === undefined ? undefined : store.certs.get(id);
    const ind = store.individual(c?.ServiceId ?? 0);
    if (!c || !ind) break;
    const years = store.certification(c.CertificationId)?.years ?? 2;
    const base = Math.max(dayOf(parseInstant(c.ExpirationDate)), dayOf(p.toMs));
    const core = {
      ...coreOf(c),
      ActivationDate: today,
      ExpirationDate: dateOfDay(base + years * 365),
      UpdateDate: today,
      UpdateBy: 'Self Service',
      IsMaintained: true,
    };
    store.putCert(certRecord(store, core, ind));
    if (rng.chance(0.3))
      store.pending.set(c.IndividualCertificationId, { VerificationStatus: 'Pending', IssuingBodyFailureReason: null });
    add(p, 'credentialRenewals');
  }
  for (let n = rng.count(RATES.deletions * perDay * p.days); n > 0; n--) {
    const id = randomOf(rng, ids, live);
    const c = id === undefined ? undefined : store.certs.get(id);
    const ind = store.individual(c?.ServiceId ?? 0);
    if (!c || !ind) break;
    store.putCert(certRecord(store, { ...coreOf(c), IsDeleted: true, UpdateDate: today }, ind));
    store.pending.delete(c.IndividualCertificationId);
    add(p, 'credentialDeletions');
  }
  const holders = [...store.individuals.values()].filter((i) => i.Status !== 'Former');
  for (let n = rng.count(RATES.newCredentials * perDay * p.days); n > 0 && holders.length > 0; n--) {
    const ind = rng.pick(holders);
    const held = new Set(
      store
        .certsOf(ind.ServiceId)
        .filter((c) => !c.IsDeleted)
        .map((c) => c.CertificationId),
    );
    // Mostly a missing required credential gets entered; otherwise any other certification.
    const lacking = [...requiredCertIds(store, ind)].filter((id) => !held.has(id));
    const id = lacking.length > 0 ? rng.pick(lacking) : rng.pick(store.certifications).record.CertificationId;
    const cert = certRecord(store, makeCore(store, rng, ind, id, { fresh: true }), ind);
    store.putCert(cert);
    store.pending.set(cert.IndividualCertificationId, {
      VerificationStatus: 'Pending',
      IssuingBodyFailureReason: null,
    });
    add(p, 'credentialsAdded');
  }
}

function assignments(store: SandboxStore, rng: Rng, p: Advance, pools: Pools, size: SizeProfile): void {
  const log: { rec: AssignmentChange; at: number }[] = [];
  const emit = (a: ShiftAssignment, type: AssignmentChange['EventType'], at: number, who: Assignee | null) => {
    log.push({ rec: changeOf(a, type, dateTime(at, zoneOfSchedule(store, a.ScheduleId)), who), at });
    add(
      p,
      type === 'Created'
        ? 'assignmentsCreated'
        : type === 'Deleted'
          ? 'assignmentsDeleted'
          : type === 'Assigned'
            ? 'assignmentsAssigned'
            : 'assignmentsUnassigned',
    );
  };
  const scene: AssignmentScene = { store, rng, p, pools, size, emit };
  const createdAt = publish(scene);
  move(scene, createdAt);
  clock(store, rng, p);
  // Stable: events of one stamp stay in the order they were applied.
  log.sort((a, b) => a.at - b.at);
  stampLate(store, rng, p, log);
  const from = store.changes.length;
  for (const e of log) store.addChange(e.rec, e.at);
  sortChanges(store, from);
}

/**
 * Some events arrive late, as the service's own change records sometimes do: they become visible only now, stamped
 * up to `store.lateMs` before the advance began, i.e. before the last moment a reader could have read. A reader
 * whose windows overlap by less than `lateMs` misses them. An event is never stamped before an earlier event of
 * the same assignment, so the last record still says what GetList shows.
 */
function stampLate(store: SandboxStore, rng: Rng, p: Advance, log: { rec: AssignmentChange; at: number }[]): void {
  if (store.lateMs <= 0) return;
  const last = new Map<number, number>();
  for (const e of log) {
    const id = e.rec.ShiftAssignmentId;
    if (rng.chance(LATE_SHARE)) {
      const stamp = p.fromMs - rng.int(0, store.lateMs - 1);
      const after = Math.max(last.get(id) ?? -Infinity, lastStoredChange(store, id, stamp));
      if (stamp > after) {
        e.at = stamp;
        e.rec = { ...e.rec, EventTimeStamp: dateTime(stamp, zoneOfSchedule(store, e.rec.ScheduleId)) };
        add(p, 'lateChangeRecords');
      }
    }
    last.set(id, Math.max(last.get(id) ?? -Infinity, e.at));
  }
}

/** The stamp of the latest stored change record of an assignment at or after `since`, or -Infinity. */
function lastStoredChange(store: SandboxStore, id: number, since: number): number {
  let latest = -Infinity;
  for (let i = bound(store.changeTimes, since); i < store.changes.length; i++)
    if (store.changes[i]!.ShiftAssignmentId === id) latest = store.changeTimes[i]!;
  return latest;
}

/** Puts the records appended from `from` on in stamp order among the stored ones (late ones go back a little). */
function sortChanges(store: SandboxStore, from: number): void {
  if (from >= store.changes.length) return;
  let min = Infinity;
  for (let i = from; i < store.changes.length; i++) min = Math.min(min, store.changeTimes[i]!);
  let k = from;
  while (k > 0 && store.changeTimes[k - 1]! > min) k--;
  const idx = Array.from({ length: store.changes.length - k }, (_, i) => k + i).sort(
    (a, b) => store.changeTimes[a]! - store.changeTimes[b]! || a - b,
  );
  const recs = idx.map((i) => store.changes[i]!);
  const times = idx.map((i) => store.changeTimes[i]!);
  for (let j = 0; j < idx.length; j++) {
    store.changes[k + j] = recs[j]!;
    store.changeTimes[k + j] = times[j]!;
  }
}

/** The audit rows of some answers arrive late: stamped up to `store.lateMs` before the advance began. */
function lateAudit(store: SandboxStore, rng: Rng, p: Advance, from: number): void {
  if (store.lateMs <= 0) return;
  let group = '';
  let lateStamp = 0;
  for (let i = from; i < store.audit.length; i++) {
    const row = store.audit[i]!;
    const key = `${row.ResponseId}@${store.auditTimes[i]!}`;
    if (key !== group) {
      group = key;
      lateStamp = rng.chance(LATE_SHARE) ? p.fromMs - rng.int(0, store.lateMs - 1) : 0;
    }
    if (lateStamp === 0) continue;
    const stamp = lateStamp;
    store.audit[i] = { ...row, InsertDate: dateTime(stamp, offsetOfText(row.InsertDate)) };
    store.auditTimes[i] = stamp;
    add(p, 'lateAuditRows');
  }
}

/** Minutes east of UTC of a date-time text's `±hh:mm` suffix. */
function offsetOfText(text: string | null | undefined): number {
  const m = /([+-])(\d{2}):(\d{2})$/.exec(text ?? '');
  return m ? (m[1] === '-' ? -1 : 1) * (Number(m[2]) * 60 + Number(m[3])) : 0;
}

type Emit = (a: ShiftAssignment, type: AssignmentChange['EventType'], at: number, who: Assignee | null) => void;

/** What the advance's assignment changes are made in: the store, the draws, the advance, and where each is told. */
interface AssignmentScene {
  store: SandboxStore;
  rng: Rng;
  p: Advance;
  pools: Pools;
  size: SizeProfile;
  emit: Emit;
}

/**
 * As days pass, the day at the end of the publishing horizon gets its schedule (Created changes), stamped at the
 * moment its publishing day began, or the advance's start if that was earlier. Returns when each new one was created.
 */
function publish({ store, rng, p, pools, size, emit }: AssignmentScene): Map<number, number> {
  const createdAt = new Map<number, number>();
  const factor = size.assignmentsPerDay / slotsPerDay(store);
  while (store.horizonDay < dayOf(p.toMs) + size.futureDays) {
    store.horizonDay++;
    const at = Math.min(
      Math.max((store.horizonDay - size.futureDays) * DAY_MS + rng.int(0, 3_600_000), p.fromMs + 1),
      latestStamp(p.toMs),
    );
    for (const slot of scheduleDay(store, rng, pools, { day: store.horizonDay, factor, openShare: 0.2 })) {
      store.insertAssignment(slot.rec, slot.startMs);
      emit(slot.rec, 'Created', at, slot.rec.Assignee ?? null);
      createdAt.set(slot.rec.ShiftAssignmentId, at);
    }
  }
  return createdAt;
}

/**
 * Upcoming shifts get assigned, unassigned, reassigned or deleted. The moves are applied in the order of their
 * stamps, so the last change record of an assignment always describes what GetList shows.
 */
function move(scene: AssignmentScene, createdAt: Map<number, number>): void {
  const { store, rng, p, size, emit } = scene;
  const today = dayOf(p.toMs);
  const moves = rng.count(size.assignmentsPerDay * RATES.assignmentMoves * p.days);
  const deletes = rng.count(size.assignmentsPerDay * RATES.assignmentDeletes * p.days);
  const ops = Array.from({ length: moves + deletes }, (_, k) => ({ at: p.at(), del: k >= moves })).sort(
    (a, b) => a.at - b.at,
  );
  for (const op of ops) {
    const b = store.days.get(rng.int(today + 1, store.horizonDay));
    if (!b || b.items.length === 0) continue;
    const i = rng.int(0, b.items.length - 1);
    const a = b.items[i] as ShiftAssignment;
    if ((createdAt.get(a.ShiftAssignmentId) ?? -Infinity) >= op.at) continue;
    if (op.del) {
      b.items.splice(i, 1);
      b.starts.splice(i, 1);
      emit(a, 'Deleted', op.at, a.Assignee ?? null);
    } else if (!(a.Type === 'Ride Along' && a.Assignee != null && a.Assignee.ServiceId == null)) {
      reassign(scene, b, i, op.at);
    }
  }
}

function reassign({ store, rng, pools, p, emit }: AssignmentScene, b: DayBucket, i: number, at: number): void {
  const a = b.items[i] as ShiftAssignment;
  const candidate = pickPerson(store, rng, pools.byTitle.get(a.JobTitleId ?? 0) ?? []);
  if (a.Assignee == null) {
    if (!candidate) return;
    b.items[i] = { ...a, Assignee: candidate };
    emit(a, 'Assigned', at, candidate);
    return;
  }
  emit(a, 'Unassigned', at, a.Assignee);
  const next = candidate !== null && candidate !== a.Assignee && rng.chance(0.7) ? candidate : null;
  b.items[i] = { ...a, Assignee: next };
  // The reassignment follows the unassignment by a second, still inside the advance.
  if (next) emit(a, 'Assigned', Math.min(at + 1000, latestStamp(p.toMs)), next);
}

/** Employees clock in to shifts whose start passed in the advance, and out of those whose end passed. */
function clock(store: SandboxStore, rng: Rng, p: Advance): void {
  for (let d = dayOf(p.fromMs) - 2; d <= dayOf(p.toMs); d++) {
    const b = store.days.get(d);
    if (!b) continue;
    for (let i = 0; i < b.items.length; i++) {
      const a = b.items[i] as ShiftAssignment;
      const startMs = b.starts[i] as number;
      if (a.Assignee?.ServiceId == null || startMs > p.toMs) continue;
      const zone = zoneOfSchedule(store, a.ScheduleId);
      if (a.ClockInDateTime == null && startMs > p.fromMs && rng.chance(0.95)) {
        const inMs = clamp(startMs + rng.int(-15, 10) * 60_000, p);
        b.items[i] = { ...a, ClockInDateTime: dateTime(inMs, zone) };
        add(p, 'clockIns');
      } else if (a.ClockInDateTime != null && a.ClockOutDateTime == null) {
        const endMs = parseInstant(a.EndDateTime);
        if (!(endMs <= p.toMs) || endMs < p.fromMs - DAY_MS) continue;
        const outMs = clamp(endMs + rng.int(-5, 30) * 60_000, p);
        b.items[i] = { ...a, ClockOutDateTime: dateTime(outMs, zone) };
        add(p, 'clockOuts');
      }
    }
  }
}

function clamp(ms: number, p: Advance): number {
  return Math.min(Math.max(ms, p.fromMs + 1000), latestStamp(p.toMs));
}

/** Supervisors decide pending requests; employees file new ones for the coming weeks. */
function timeOff(store: SandboxStore, rng: Rng, p: Advance, perDay: number): void {
  // Requests that started long ago are decided late, by lateTimeOff.
  const pending = store.timeOff.filter((e) => e.rec.Status === 'Pending' && e.startMs >= p.toMs - 30 * DAY_MS);
  const supervisors = [...store.individuals.values()].filter((i) => i.IsSupervisor === 1 && i.Status === 'Active');
  for (const e of rng.sample(pending, rng.count(pending.length * Math.min(1, RATES.timeOffDecisions * p.days)))) {
    const r = rng.next();
    const status = r < 0.8 ? 'Approved' : r < 0.95 ? 'Denied' : 'Canceled';
    const reviewer = supervisors.length > 0 ? rng.pick(supervisors) : undefined;
    e.rec = decide(store, rng, e, { status, reviewer, atMs: p.at() });
    add(p, 'timeOffDecisions');
  }
  const employees = [...store.individuals.values()].filter((i) => i.IsEmployee === 1 && i.Status === 'Active');
  for (let n = rng.count(RATES.timeOffRequests * perDay * p.days); n > 0 && employees.length > 0; n--) {
    const ind = rng.pick(employees);
    const startMs = zoneOf(store, ind).toUtc((dayOf(p.toMs) + rng.int(2, 60)) * DAY_MS);
    insertTimeOff(store, makeTimeOff(store, rng, ind, startMs, p.at()));
    add(p, 'timeOffRequests');
  }
}

function courses(store: SandboxStore, rng: Rng, p: Advance, perDay: number): void {
  const active = [...store.individuals.values()].filter((i) => i.Status === 'Active');
  for (let n = rng.count(RATES.courses * perDay * p.days); n > 0 && active.length > 0; n--) {
    store.courses.push(makeCourse(store, rng, rng.pick(active), dayOf(p.toMs), dayOf(p.toMs)));
    add(p, 'coursesStarted');
  }
}

/** New and edited form responses, new runs, and edited run-log responses, each with its audit rows. */
function forms(store: SandboxStore, rng: Rng, p: Advance, pools: Pools, size: SizeProfile): void {
  const people: readonly Individual[] = pools.everyone;
  if (people.length === 0) return;
  const perDay = size.formResponses / size.historyDays;
  const starts = Array.from({ length: rng.count(perDay * p.days) }, () => p.at()).sort((a, b) => a - b);
  for (const startMs of starts) {
    const form = rng.pick(store.forms);
    store.responses.get(form.FormId)?.push(makeFormResponse(store, rng, form, startMs, people));
    add(p, 'formResponsesCreated');
  }
  const recent = [...store.responses.values()].flat().filter((e) => e.startMs > p.toMs - 60 * DAY_MS);
  for (let n = rng.count(perDay * RATES.formEdits * p.days); n > 0 && recent.length > 0; n--) {
    const e = rng.pick(recent);
    const form = store.forms.find((f) => f.FormId === e.formId);
    if (!form) continue;
    editFormResponse(store, rng, e, form, {
      atMs: Math.min(Math.max(p.at(), e.updatedMs + 1000), latestStamp(p.toMs)),
      editor: rng.pick(people),
      people,
    });
    add(p, 'formResponsesEdited');
  }
  const runsPerDay = size.runs / size.historyDays;
  const crewPool = people.filter((i) => i.JobTitle === 'Paramedic' || i.JobTitle === 'EMT');
  const runTimes = Array.from({ length: rng.count(runsPerDay * p.days) }, () => p.at()).sort((a, b) => a - b);
  for (const runMs of runTimes) {
    const made = makeRun(store, rng, runMs, people, crewPool);
    store.runLogResponses.push(...made);
    add(p, 'runLogResponsesCreated', made.length);
  }
  editRuns(store, rng, p, people, runsPerDay);
}

function editRuns(store: SandboxStore, rng: Rng, p: Advance, people: readonly Individual[], runsPerDay: number): void {
  const list = store.runLogResponses;
  const firstRecent = list.findIndex((e) => e.runMs > p.toMs - 30 * DAY_MS);
  if (firstRecent < 0) return;
  for (let n = rng.count(runsPerDay * RATES.runEdits * p.days); n > 0; n--) {
    const e = list[rng.int(firstRecent, list.length - 1)];
    const form = store.runLogForms.find((f) => f.FormId === e?.formId);
    if (!e || !form) continue;
    const editor = rng.pick(people);
    const at = Math.min(Math.max(p.at(), e.updatedMs + 1000), latestStamp(p.toMs));
    const crew = e.rec.RelatedRun?.Crew ?? [];
    const ctx: AnswerContext = {
      responseId: e.rec.ResponseId,
      atMs: at,
      zone: e.zone,
      people,
      crew: crew.map((c) => ({
        CrewRole: c.CrewRole ?? 'Attendant',
        ServiceId: c.ServiceId ?? null,
        EmployeeNumber: c.EmployeeNumber ?? null,
        FirstName: c.FirstName == null ? null : String(c.FirstName),
        LastName: c.LastName == null ? null : String(c.LastName),
      })),
    };
    const { answers, changed } = editAnswers(store, rng, form, e.rec.Answers ?? [], ctx);
    e.rec = { ...e.rec, Status: rng.chance(0.5) ? rng.pick(form.statuses) : e.rec.Status, Answers: answers };
    e.updatedMs = at;
    const edit = {
      responseId: e.rec.ResponseId,
      runId: e.rec.RelatedRun?.RunId ?? null,
      answers: changed,
      by: editor,
      atMs: at,
      zone: e.zone,
    };
    for (const row of auditRows(store, form, edit)) store.addAudit(row, at, form.FormId);
    add(p, 'runLogResponsesEdited');
  }
}
