import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { startSandbox, type RunningSandbox } from '../../src/sandbox/index.ts';
import { endpoints } from '../../src/resources/index.ts';
import { allPages, call, truth, v2 } from './http-helpers.ts';

const DAY = 86_400_000;
const SA = '/ShiftAssignment/GetList';

describe('scheduling, time off and courses', () => {
  let sb: RunningSandbox;
  let w: { StartDate: string; EndDate: string };
  beforeAll(async () => {
    sb = await startSandbox({ size: 'tiny', seed: 7, rateLimit: null });
    const now = sb.data.now().getTime();
    w = { StartDate: new Date(now - 20 * DAY).toISOString(), EndDate: new Date(now + 10 * DAY).toISOString() };
  });
  afterAll(() => sb.close());

  it('GET /ShiftAssignment/GetList: envelope of ShiftAssignment whose start lies in StartDate..EndDate', async () => {
    const items = await allPages(sb, SA, w);
    expect(items.length).toBeGreaterThan(0);
    expect(items.map((a) => a.ShiftAssignmentId).sort()).toEqual(
      (await truth(sb, 'shiftAssignments', w)).map((a) => a.ShiftAssignmentId).sort(),
    );
    const [from, to] = [Date.parse(w.StartDate), Date.parse(w.EndDate)];
    for (const a of items) {
      endpoints.shiftAssignments.item.parse(a);
      expect(Date.parse(a.StartDateTime)).toBeGreaterThanOrEqual(from);
      expect(Date.parse(a.StartDateTime)).toBeLessThanOrEqual(to);
    }
  });

  it('OnlyOpenShifts, OnlyFilledShifts, OnlyRideAlong and OnlyClockedInShifts filter as their names say', async () => {
    const open = await allPages(sb, SA, { ...w, OnlyOpenShifts: true });
    const filled = await allPages(sb, SA, { ...w, OnlyFilledShifts: true });
    const all = await allPages(sb, SA, w);
    expect(open.every((a) => a.Assignee === null)).toBe(true);
    expect(filled.every((a) => a.Assignee !== null)).toBe(true);
    expect(open.length + filled.length).toBe(all.length);
    expect((await allPages(sb, SA, { ...w, OnlyRideAlong: true })).every((a) => a.Type === 'Ride Along')).toBe(true);
    const clockedIn = await allPages(sb, SA, { ...w, OnlyClockedInShifts: true });
    expect(clockedIn.every((a) => a.ClockInDateTime !== null && a.ClockOutDateTime === null)).toBe(true);
  });

  it('GET /ShiftAssignment/GetAssignmentChanges: envelope of changes filtered on EventTimeStamp', async () => {
    const changes = await allPages(sb, '/ShiftAssignment/GetAssignmentChanges', w);
    expect(changes.length).toBeGreaterThan(0);
    for (const c of changes) {
      endpoints.assignmentChanges.item.parse(c);
      expect(Date.parse(c.EventTimeStamp)).toBeGreaterThanOrEqual(Date.parse(w.StartDate));
    }
  });

  it('GET /Schedule/GetList: "schedules with their shifts" as an array', async () => {
    const list = (await call(sb, v2('/Schedule/GetList'))).json();
    expect(list.length).toBeGreaterThan(0);
    for (const s of list) endpoints.schedules.item.parse(s);
    expect(list).toEqual(JSON.parse(JSON.stringify(await truth(sb, 'schedules'))));
  });

  it("GET /TimeOffRequest/GetList: envelope; Employee and ReviewedBy carry UniqueIdentifier under the example's name `UniqueIdentifer`", async () => {
    const now = sb.data.now().getTime();
    const q = {
      StartDateTime: new Date(now - 120 * DAY).toISOString(),
      EndDateTime: new Date(now + 120 * DAY).toISOString(),
    };
    const items = await allPages(sb, '/TimeOffRequest/GetList', q);
    expect(items.length).toBeGreaterThan(0);
    for (const t of items) {
      endpoints.timeOffRequests.item.parse(t);
      expect(t.Employee).toHaveProperty('UniqueIdentifer');
      expect(t.Employee).not.toHaveProperty('UniqueIdentifier');
      if (t.ReviewedBy) expect(t.ReviewedBy).not.toHaveProperty('UniqueIdentifier');
    }
    expect(items.some((t) => t.ReviewedBy && 'UniqueIdentifer' in t.ReviewedBy)).toBe(true);
    const approved = await allPages(sb, '/TimeOffRequest/GetList', { ...q, RequestStatus: 'Approved,Denied' });
    expect(approved.every((t) => t.Status === 'Approved' || t.Status === 'Denied')).toBe(true);
    const bad = await call(sb, v2('/TimeOffRequest/GetList', { ...q, RequestStatus: 'Approved,Maybe' }));
    expect(bad.status).toBe(400);
    expect(bad.json().error_message).toContain('RequestStatus');
  });

  it('GET /IndividualCourse/GetList: array; "The interval between startDate and endDate must not exceed 31 days"', async () => {
    const end = sb.data.now();
    const start = new Date(end.getTime() - 31 * DAY);
    const day = (d: Date) => d.toISOString().slice(0, 10);
    const res = await call(
      sb,
      v2('/IndividualCourse/GetList', { startDate: day(start), endDate: day(end), statusOption: 0 }),
    );
    expect(res.status).toBe(200);
    const list = res.json();
    expect(Array.isArray(list)).toBe(true);
    for (const c of list) endpoints.individualCourses.item.parse(c);
    const tooLong = await call(
      sb,
      v2('/IndividualCourse/GetList', {
        startDate: day(new Date(start.getTime() - DAY)),
        endDate: day(end),
        statusOption: 0,
      }),
    );
    expect(tooLong.status).toBe(400);
    expect(tooLong.json()).toMatchObject({
      error: 'invalid_parameters',
      error_message: expect.stringContaining('endDate'),
    });
    const badOption = await call(
      sb,
      v2('/IndividualCourse/GetList', { startDate: day(start), endDate: day(end), statusOption: 4 }),
    );
    expect(badOption.status).toBe(400);
    expect(badOption.json().error_message).toContain('statusOption');
  });
});
