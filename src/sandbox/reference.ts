import { CERTIFICATIONS, DEPARTMENTS, JOB_TITLES, LOCALES, WORK_SHIFTS, WORK_STATUSES } from './names.ts';
import type { ScheduleDef, ShiftDef, SandboxStore } from './store.ts';
import { zone } from './time.ts';

/** Fills the reference lists, and the schedules with their shifts, which every other resource refers to. */
export function buildReference(store: SandboxStore): void {
  store.certifications = CERTIFICATIONS.map((c, i) => ({
    record: { CertificationId: 301 + i, CertificationName: c.name },
    issuer: c.issuer,
    years: c.years,
    driver: c.driver === true,
  }));
  const certId = (name: string) => {
    const found = store.certifications.find((c) => c.record.CertificationName === name);
    if (!found) throw new Error(`reference data names an unknown certification: ${name}`);
    return found.record.CertificationId;
  };
  store.jobTitles = JOB_TITLES.map((j, i) => ({
    record: { JobTitleId: 11 + i, JobTitleName: j.name },
    requires: j.requires.map(certId),
    shiftWork: j.shiftWork,
  }));
  store.departments = DEPARTMENTS.map((name, i) => ({ DepartmentId: 21 + i, DepartmentName: name }));
  store.workShifts = WORK_SHIFTS.map((name, i) => ({ WorkShiftId: 41 + i, WorkShiftName: name }));
  store.workStatuses = WORK_STATUSES.map((name, i) => ({ WorkStatusId: 61 + i, WorkStatusName: name }));
  store.locales = LOCALES.map((l, i) => ({
    record: { LocaleId: 81 + i, LocaleName: l.name },
    businessUnitId: l.businessUnitId,
    zone: zone(l.zone),
    requires: l.requires.map(certId),
  }));
  store.schedules = buildSchedules(store);
}

/** Shift patterns of a station: name, local start hour, length, job title, and how many crews per day. */
const STATION_SHIFTS: readonly [string, number, number, string, number][] = [
  ['A Shift 0700-1900', 7, 12, 'Paramedic', 4],
  ['B Shift 1900-0700', 19, 12, 'EMT', 4],
  ['Day Car 0800-1600', 8, 8, 'Advanced EMT', 2],
  ['Critical Care 24', 7, 24, 'Critical Care Paramedic', 1],
  ['Supervisor 0600-1800', 6, 12, 'Field Supervisor', 1],
  ['Wheelchair 0600-1400', 6, 8, 'Wheelchair Van Driver', 1],
  ['Flight Nurse 1000-2200', 10, 12, 'Registered Nurse', 1],
];

const DISPATCH_SHIFTS: readonly [string, number, number, string, number][] = [
  ['Dispatch Day 0600-1800', 6, 12, 'Dispatcher', 3],
  ['Dispatch Night 1800-0600', 18, 12, 'Dispatcher', 2],
];

function buildSchedules(store: SandboxStore): ScheduleDef[] {
  let shiftId = 5001;
  const make = (scheduleId: number, name: string, localeIndex: number, pattern: typeof STATION_SHIFTS): ScheduleDef => {
    const shifts: ShiftDef[] = pattern.map(([ShiftName, startHour, hours, title, slots]) => ({
      ShiftId: shiftId++,
      ShiftName,
      startHour,
      hours,
      jobTitleId: store.jobTitleByName(title)?.record.JobTitleId ?? 0,
      slots,
    }));
    const locale = store.locales[localeIndex];
    if (!locale) throw new Error(`no locale ${localeIndex}`);
    return {
      record: {
        ScheduleId: scheduleId,
        ScheduleName: name,
        Shifts: shifts.map((s) => ({ ShiftId: s.ShiftId, ShiftName: s.ShiftName })),
      },
      locale,
      shifts,
    };
  };
  const stations = store.locales.map((l, i) =>
    make(701 + i, `${l.record.LocaleName ?? 'Station'} Schedule`, i, STATION_SHIFTS),
  );
  return [...stations, make(790, 'Communications Center', 0, DISPATCH_SHIFTS)];
}
