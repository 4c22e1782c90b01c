import type { EndpointName } from '../resources/index.ts';
import type {
  AssignmentChange,
  FormAudit,
  Individual,
  IndividualCertification,
  ShiftAssignment,
  Supervisor,
} from '../source/schemas/index.ts';
import { holdsListedCredentials, pendingItem, requiredStatusOf } from './credentials.ts';
import type { Outcome, ParsedQuery, QueryValue, SandboxRefusal } from './service.ts';
import type { SandboxStore } from './store.ts';
import { DAY_MS, dateKeyOf, dayOf, instantOf } from './time.ts';

/**
 * The read side of the sandbox: each endpoint's filters exactly as service-spec.md "Endpoints" describes them.
 *
 * Date windows are inclusive at both ends: the spec says StartDate and EndDate "filter on" a date, with no word
 * of exclusion, so a record stamped exactly at either bound is in the window. Date-only bounds (`date` params)
 * cover their whole calendar day and are compared with the record's own calendar date as written.
 *
 * Every listing is in a stable order (by id, or by the filtered date and then id), so offset paging is
 * consistent while the data does not change.
 */

export type Mode = 'read' | 'truth';

export interface Listing {
  items: readonly object[];
  extras?: Record<string, unknown>;
}

type Handler = (store: SandboxStore, q: ParsedQuery, mode: Mode) => Outcome<Listing>;

export function refuse(
  status: SandboxRefusal['status'],
  code: string,
  message: string,
  fields?: Record<string, string>,
): { ok: false; refusal: SandboxRefusal } {
  return { ok: false, refusal: fields ? { status, code, message, fields } : { status, code, message } };
}

const ok = (items: readonly object[], extras?: Record<string, unknown>): Outcome<Listing> => ({
  ok: true,
  value: extras ? { items, extras } : { items },
});

function missing(name: string) {
  return refuse(400, 'invalid_parameters', `The parameter ${name} is required.`, { [name]: `${name} is required` });
}

function list(v: QueryValue | undefined): string[] | undefined {
  if (v === undefined) return undefined;
  if (Array.isArray(v)) return v as string[];
  return String(v)
    .split(',')
    .map((s) => s.trim())
    .filter(Boolean);
}

/** An inclusive instant window; in truth mode an absent bound is open. */
function window(q: ParsedQuery, start: string, end: string, mode: Mode): Outcome<[number, number]> {
  const from = instantOf(q[start]);
  const to = instantOf(q[end]);
  if (mode === 'read' && from === undefined) return missing(start);
  if (mode === 'read' && to === undefined) return missing(end);
  return { ok: true, value: [from ?? -Infinity, to ?? Infinity] };
}

/** An inclusive window of calendar dates (`yyyy-MM-dd`). */
function dateWindow(q: ParsedQuery, start: string, end: string, mode: Mode): Outcome<[string, string]> {
  const from = dateKeyOf(q[start]);
  const to = dateKeyOf(q[end]);
  if (mode === 'read' && from === undefined) return missing(start);
  if (mode === 'read' && to === undefined) return missing(end);
  return { ok: true, value: [from ?? '0000-00-00', to ?? '9999-99-99'] };
}

/** First index whose value is >= x (or > x when `after`), in an ascending array. */
export function bound(values: ArrayLike<number>, x: number, after = false): number {
  let lo = 0;
  let hi = values.length;
  while (lo < hi) {
    const mid = (lo + hi) >>> 1;
    const v = values[mid] as number;
    if (v < x || (after && v === x)) lo = mid + 1;
    else hi = mid;
  }
  return lo;
}

/**
 * The one employee that ServiceId / UniqueIdentifier(UniqueNumber) / EmployeeNumber name together.
 * `undefined` when none was given; `null` when they name nobody (or different people).
 */
function employeeOf(
  store: SandboxStore,
  q: ParsedQuery,
  names: { serviceId: string; unique: string; employee: string },
): Individual | null | undefined {
  const ids: (number | undefined)[] = [];
  const sid = q[names.serviceId];
  const uid = q[names.unique];
  const emp = q[names.employee];
  if (sid !== undefined) ids.push(store.individuals.has(Number(sid)) ? Number(sid) : undefined);
  if (uid !== undefined) ids.push(store.byUniqueNumber.get(String(uid)));
  if (emp !== undefined) ids.push(store.byEmployeeNumber.get(String(emp)));
  if (ids.length === 0) return undefined;
  const first = ids[0];
  if (first === undefined || ids.some((id) => id !== first)) return null;
  return store.individual(first) ?? null;
}

const CERT_KEYS = { serviceId: 'ServiceId', unique: 'UniqueIdentifier', employee: 'EmployeeNumber' };

const supervisorItems = new WeakMap<Individual, Supervisor>();

function supervisorItem(ind: Individual): Supervisor {
  let item = supervisorItems.get(ind);
  if (!item) {
    const { IndividualId, ServiceId, FirstName, MiddleName, LastName, IsEmployee, IsSupervisor, Status } = ind;
    item = { IndividualId, ServiceId, FirstName, MiddleName, LastName, IsEmployee, IsSupervisor, Status };
    supervisorItems.set(ind, item);
  }
  return item;
}

function byKey(ind: Individual | undefined, what: string): Outcome<Listing> {
  return ind ? ok([ind]) : refuse(404, 'not_found', `No individual with ${what}.`);
}

function byKeyHandler(param: string, find: (store: SandboxStore, v: string) => number | undefined): Handler {
  return (store, q, mode) => {
    const v = q[param];
    if (v === undefined) return mode === 'truth' ? ok([...store.individuals.values()]) : missing(param);
    const id = find(store, String(v));
    return byKey(id === undefined ? undefined : store.individual(id), `${param} ${String(v)}`);
  };
}

function assignments(
  store: SandboxStore,
  from: number,
  to: number,
  keep: (a: ShiftAssignment) => boolean,
): ShiftAssignment[] {
  const out: ShiftAssignment[] = [];
  if (store.days.size === 0) return out;
  const d0 = Math.max(store.firstDay, from === -Infinity ? store.firstDay : dayOf(from));
  const d1 = Math.min(store.lastDay, to === Infinity ? store.lastDay : dayOf(to));
  for (let d = d0; d <= d1; d++) {
    const b = store.days.get(d);
    if (!b) continue;
    const lo = from === -Infinity ? 0 : bound(b.starts, from);
    const hi = to === Infinity ? b.starts.length : bound(b.starts, to, true);
    for (let i = lo; i < hi; i++) {
      const a = b.items[i] as ShiftAssignment;
      if (keep(a)) out.push(a);
    }
  }
  return out;
}

function assignmentFilter(q: ParsedQuery): (a: ShiftAssignment) => boolean {
  const checks: ((a: ShiftAssignment) => boolean)[] = [];
  if (q.OnlyShiftAssignment === true) checks.push((a) => a.Type === 'Shift Assignment');
  if (q.OnlyRideAlong === true) checks.push((a) => a.Type === 'Ride Along');
  if (q.OnlyOpenShifts === true) checks.push((a) => a.Assignee == null);
  if (q.OnlyFilledShifts === true) checks.push((a) => a.Assignee != null);
  // service-spec.md "Derived clock state": clock-in set and clock-out null is "currently clocked in".
  if (q.OnlyClockedInShifts === true) checks.push((a) => a.ClockInDateTime != null && a.ClockOutDateTime == null);
  return (a) => checks.every((c) => c(a));
}

function slice<T>(items: readonly T[], times: readonly number[], from: number, to: number): T[] {
  const lo = from === -Infinity ? 0 : bound(times, from);
  const hi = to === Infinity ? items.length : bound(times, to, true);
  return items.slice(lo, hi);
}

const COURSE_OUTCOMES = [null, 'inProgress', 'failed', 'succeeded'] as const;

function daysBetween(a: string, b: string): number {
  return (Date.parse(`${b}T00:00:00Z`) - Date.parse(`${a}T00:00:00Z`)) / DAY_MS;
}

const handlers: Record<EndpointName, Handler> = {
  individuals: (store, q) => {
    const excluded = new Set(list(q.ExcludeStatuses) ?? []);
    return ok([...store.individuals.values()].filter((i) => !excluded.has(i.Status ?? '')));
  },
  supervisors: (store) => ok([...store.individuals.values()].filter((i) => i.IsSupervisor === 1).map(supervisorItem)),
  individualByServiceId: byKeyHandler('serviceId', (store, v) =>
    store.individuals.has(Number(v)) ? Number(v) : undefined,
  ),
  individualByUniqueIdentifier: byKeyHandler('uniqueIdentifier', (store, v) => store.byUniqueNumber.get(v)),
  individualByEmployeeNumber: byKeyHandler('employeeNumber', (store, v) => store.byEmployeeNumber.get(v)),
  individualExists: (store, q, mode) => {
    const v = q.uniqueIdentifier;
    if (v === undefined) return mode === 'truth' ? ok([]) : missing('uniqueIdentifier');
    // The contract carries a boolean endpoint's answer as its one item; its item type is wider than object.
    return ok([store.byUniqueNumber.has(String(v)) as unknown as object]);
  },
  individualInsert: (store) => ok(store.applied.individualInsert),
  individualUpdate: (store) => ok(store.applied.individualUpdate),
  certificationInsert: (store) => ok(store.applied.certificationInsert),
  certificationUpdate: (store) => ok(store.applied.certificationUpdate),
  validateSubmission: (store) => ok(store.applied.validateSubmission),
  individualCertifications: (store, q, mode) => {
    const who = employeeOf(store, q, CERT_KEYS);
    if (who === null)
      return refuse(404, 'not_found', 'No employee matches the given ServiceId, UniqueIdentifier or EmployeeNumber.');
    const includeDeleted = q.IncludeDeleted === undefined ? mode === 'truth' : q.IncludeDeleted === true;
    const since = dateKeyOf(q.updatedSince);
    const source = who ? store.certsOf(who.ServiceId) : store.certs.values();
    const out: IndividualCertification[] = [];
    for (const c of source) {
      if (c.IsDeleted && !includeDeleted) continue;
      if (q.primaryOnly === true && !c.IsPrimary) continue;
      // "only credentials updated on or after that date"
      if (since !== undefined && (c.UpdateDate ?? '') < since) continue;
      if (!holdsListedCredentials(store.individual(c.ServiceId ?? 0))) continue;
      out.push(c);
    }
    return ok(out);
  },
  pendingCertifications: (store) => {
    const out = [];
    for (const [id, state] of store.pending) {
      const c = store.certs.get(id);
      if (c && !c.IsDeleted && holdsListedCredentials(store.individual(c.ServiceId ?? 0)))
        out.push(pendingItem(c, state));
    }
    return ok(out.sort((a, b) => a.IndividualCertificationId - b.IndividualCertificationId));
  },
  requiredCertificationStatus: (store, q) => {
    const who = employeeOf(store, q, CERT_KEYS);
    if (who === null) return ok([]);
    const people = who ? [who] : store.individuals.values();
    const out = [];
    for (const p of people) if (p.IsEmployee === 1 && holdsListedCredentials(p)) out.push(requiredStatusOf(store, p));
    return ok(out);
  },
  shiftAssignments: (store, q, mode) => {
    const w = window(q, 'StartDate', 'EndDate', mode);
    if (!w.ok) return w;
    return ok(assignments(store, w.value[0], w.value[1], assignmentFilter(q)));
  },
  assignmentChanges: (store, q, mode) => {
    const w = window(q, 'StartDate', 'EndDate', mode);
    if (!w.ok) return w;
    return ok(slice<AssignmentChange>(store.changes, store.changeTimes, w.value[0], w.value[1]));
  },
  schedules: (store) => ok(store.schedules.map((s) => s.record)),
  timeOffRequests: (store, q, mode) => {
    const w = window(q, 'StartDateTime', 'EndDateTime', mode);
    if (!w.ok) return w;
    const [from, to] = w.value;
    const who = employeeOf(store, q, { serviceId: 'ServiceId', unique: 'UniqueNumber', employee: 'EmployeeNumber' });
    if (who === null) return ok([]);
    const statuses = list(q.RequestStatus);
    const entries = store.timeOff;
    let lo = 0;
    let hi = entries.length;
    while (lo < hi) {
      const mid = (lo + hi) >>> 1;
      if ((entries[mid]?.startMs ?? 0) < from) lo = mid + 1;
      else hi = mid;
    }
    const out = [];
    // StartDateTime "filters on request start", EndDateTime "filters on request end".
    for (let i = lo; i < entries.length; i++) {
      const e = entries[i]!;
      if (e.startMs > to) break;
      if (e.endMs > to) continue;
      if (who && e.serviceId !== who.ServiceId) continue;
      if (statuses && !statuses.includes(e.rec.Status ?? '')) continue;
      out.push(e.rec);
    }
    return ok(out);
  },
  individualCourses: (store, q, mode) => {
    const w = dateWindow(q, 'startDate', 'endDate', mode);
    if (!w.ok) return w;
    const [from, to] = w.value;
    if (mode === 'read') {
      if (to < from)
        return refuse(400, 'invalid_parameters', 'endDate must not be before startDate.', {
          endDate: 'endDate must not be before startDate',
        });
      if (daysBetween(from, to) > 31)
        return refuse(
          400,
          'invalid_parameters',
          'The interval between startDate and endDate must not exceed 31 days.',
          {
            endDate: 'The interval between startDate and endDate must not exceed 31 days',
          },
        );
    }
    const option = q.statusOption === undefined ? (mode === 'truth' ? 0 : undefined) : Number(q.statusOption);
    if (option === undefined) return missing('statusOption');
    if (!(option >= 0 && option <= 3 && Number.isInteger(option)))
      return refuse(400, 'invalid_parameters', 'statusOption must be 0, 1, 2 or 3.', {
        statusOption: 'statusOption must be 0, 1, 2 or 3',
      });
    const outcome = COURSE_OUTCOMES[option];
    const individualId = Number(q.individualId ?? 0);
    // The course list is windowed on each record's StartDate, so every record falls in exactly one window.
    return ok(
      store.courses
        .filter((c) => (c.rec.StartDate ?? '') >= from && (c.rec.StartDate ?? '') <= to)
        .filter((c) => outcome === null || c.outcome === outcome)
        .filter((c) => individualId === 0 || c.individualId === individualId)
        .map((c) => c.rec),
    );
  },
  runLogForms: (store) => ok(store.runLogForms.map((f) => f.record)),
  formAudit: (store, q, mode) => {
    const w = window(q, 'StartDate', 'EndDate', mode);
    if (!w.ok) return w;
    const lo = w.value[0] === -Infinity ? 0 : bound(store.auditTimes, w.value[0]);
    const hi = w.value[1] === Infinity ? store.audit.length : bound(store.auditTimes, w.value[1], true);
    const formId = q.FormId === undefined ? undefined : Number(q.FormId);
    if (formId === undefined) return ok(store.audit.slice(lo, hi));
    const out: FormAudit[] = [];
    for (let i = lo; i < hi; i++) if (store.auditFormIds[i] === formId) out.push(store.audit[i]!);
    return ok(out);
  },
  formResponses: (store, q, mode) => {
    const w = dateWindow(q, 'StartDate', 'EndDate', mode);
    if (!w.ok) return w;
    const [from, to] = w.value;
    if (q.FormId === undefined && mode === 'read') return missing('FormId');
    const forms = q.FormId === undefined ? store.forms : store.forms.filter((f) => f.FormId === Number(q.FormId));
    const form = forms[0];
    if (!form) return refuse(404, 'not_found', `No form with FormId ${String(q.FormId)}.`);
    const since = instantOf(q.UpdatedSince);
    const out = [];
    for (const f of forms) {
      for (const e of store.responses.get(f.FormId) ?? []) {
        // StartDate and EndDate "filter on form start date": the response's calendar date as written.
        const day = String(e.rec.StartDate ?? '').slice(0, 10);
        if (day < from || day > to) continue;
        if (since !== undefined && e.updatedMs < since) continue;
        out.push(e.rec);
      }
    }
    return ok(out, q.FormId === undefined ? undefined : { FormId: form.FormId, FormTitle: form.FormTitle });
  },
  runLogFormResponses: (store, q, mode) => {
    const w = window(q, 'StartDate', 'EndDate', mode);
    if (!w.ok) return w;
    if (mode === 'read' && q.RunTypeId === undefined) return missing('RunTypeId');
    if (mode === 'read' && q.FormType === undefined) return missing('FormType');
    const runType = q.RunTypeId === undefined ? undefined : store.runTypes.find((t) => t.id === Number(q.RunTypeId));
    if (q.RunTypeId !== undefined && !runType)
      return refuse(404, 'not_found', `No run type with RunTypeId ${String(q.RunTypeId)}.`);
    const formType = q.FormType === undefined ? undefined : String(q.FormType);
    if (formType !== undefined && !['Debrief', 'Utilization', 'ChartReview'].includes(formType))
      return refuse(400, 'invalid_parameters', 'FormType must be one of Debrief, Utilization, ChartReview.', {
        FormType: 'FormType must be one of Debrief, Utilization, ChartReview',
      });
    const since = instantOf(q.UpdatedSince);
    const [from, to] = w.value;
    const out = store.runLogResponses
      .filter((e) => (!runType || e.runTypeId === runType.id) && (!formType || e.formType === formType))
      .filter((e) => e.runMs >= from && e.runMs <= to && (since === undefined || e.updatedMs >= since))
      .map((e) => e.rec);
    const extras =
      runType && formType
        ? { RunLogTypeId: runType.id, RunLogTypeName: runType.name, RunLogFormType: formType }
        : undefined;
    return ok(out, extras);
  },
  certifications: (store) => ok(store.certifications.map((c) => c.record)),
  workStatuses: (store) => ok(store.workStatuses),
  departments: (store) => ok(store.departments),
  workShifts: (store) => ok(store.workShifts),
  jobTitles: (store) => ok(store.jobTitles.map((j) => j.record)),
  locales: (store) => ok(store.locales.map((l) => l.record)),
};

export function runQuery(store: SandboxStore, endpoint: EndpointName, q: ParsedQuery, mode: Mode): Outcome<Listing> {
  const handler = handlers[endpoint];
  if (!handler) return refuse(404, 'not_found', `Unknown endpoint ${String(endpoint)}.`);
  return handler(store, q, mode);
}

/** A stable text key of a query, for memoizing its result. */
export function queryKey(endpoint: string, q: ParsedQuery): string {
  const parts = Object.keys(q)
    .filter((k) => q[k] !== undefined)
    .sort()
    .map((k) => {
      const v = q[k];
      const text = v instanceof Date ? v.toISOString() : Array.isArray(v) ? v.join(',') : String(v);
      return `${k}=${text}`;
    });
  return `${endpoint}?${parts.join('&')}`;
}
