import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { startSandbox, type RunningSandbox } from '../../src/sandbox/index.ts';
import { endpoints } from '../../src/resources/index.ts';
import { call, truth, v2 } from './http-helpers.ts';

const DAY = 86_400_000;

describe('forms, run logs and reference lists', () => {
  let sb: RunningSandbox;
  let info: { formIds: number[]; runTypeIds: number[] };
  let range: { StartDate: string; EndDate: string };
  beforeAll(async () => {
    sb = await startSandbox({ size: 'tiny', seed: 11, rateLimit: null });
    info = (await call(sb, '/_sandbox/info', { key: null })).json();
    const now = sb.data.now().getTime();
    range = { StartDate: new Date(now - 365 * DAY).toISOString(), EndDate: new Date(now + DAY).toISOString() };
  });
  afterAll(() => sb.close());

  it('GET /FormResponse/GetList: envelope with the count under `Results`, plus FormId and FormTitle', async () => {
    expect(info.formIds.length).toBeGreaterThan(0);
    const day = (iso: string) => iso.slice(0, 10);
    let seen = 0;
    for (const formId of info.formIds) {
      const res = await call(
        sb,
        v2('/FormResponse/GetList', {
          FormId: formId,
          StartDate: day(range.StartDate),
          EndDate: day(range.EndDate),
          Limit: 50,
        }),
      );
      expect(res.status).toBe(200);
      const page = res.json();
      expect(Object.keys(page).sort()).toEqual(['Data', 'FormId', 'FormTitle', 'HasMoreResults', 'Offset', 'Results']);
      expect(page).toMatchObject({
        FormId: formId,
        FormTitle: expect.any(String),
        Offset: 0,
        Results: page.Data.length,
      });
      for (const r of page.Data) endpoints.formResponses.item.parse(r);
      seen += page.Data.length;
    }
    expect(seen).toBeGreaterThan(0);
  });

  it('GET /RunLogFormResponse/GetList: `Results` plus RunLogTypeId, RunLogTypeName and RunLogFormType; FormType outside its values is refused', async () => {
    const runTypeId = info.runTypeIds[0]!;
    const page = (
      await call(sb, v2('/RunLogFormResponse/GetList', { RunTypeId: runTypeId, FormType: 'Debrief', ...range }))
    ).json();
    expect(Object.keys(page).sort()).toEqual(
      ['Data', 'HasMoreResults', 'Offset', 'Results', 'RunLogFormType', 'RunLogTypeId', 'RunLogTypeName'].sort(),
    );
    expect(page).toMatchObject({
      RunLogTypeId: runTypeId,
      RunLogTypeName: expect.any(String),
      RunLogFormType: 'Debrief',
    });
    expect(page.Results).toBe(page.Data.length);
    for (const r of page.Data) endpoints.runLogFormResponses.item.parse(r);
    const bad = await call(
      sb,
      v2('/RunLogFormResponse/GetList', { RunTypeId: runTypeId, FormType: 'Autopsy', ...range }),
    );
    expect(bad.status).toBe(400);
    expect(bad.json()).toMatchObject({
      error: 'invalid_parameters',
      error_message: expect.stringContaining('FormType'),
    });
  });

  it("GET /RunLog/GetFormAuditList: envelope; AuditIndividual shown under the example's name `InsertBy`", async () => {
    const page = (await call(sb, v2('/RunLog/GetFormAuditList', { ...range, Limit: 100 }))).json();
    expect(page.ResultCount).toBe(page.Data.length);
    expect(page.Data.length).toBeGreaterThan(0);
    for (const a of page.Data) {
      endpoints.formAudit.item.parse(a);
      expect(a).not.toHaveProperty('AuditIndividual');
    }
    expect(page.Data.some((a: any) => a.InsertBy && a.InsertBy.UniqueIdentifier !== undefined)).toBe(true);
  });

  it('GET /RunLogForm/GetList: array of RunLogForm', async () => {
    const list = (await call(sb, v2('/RunLogForm/GetList'))).json();
    expect(list.length).toBeGreaterThan(0);
    for (const f of list) endpoints.runLogForms.item.parse(f);
  });

  it("reference lists answer arrays of id and name; a job title's id is named `JobTitle` as in the example", async () => {
    const lists = {
      '/Certification/GetCertificationList': 'certifications',
      '/WorkStatus/GetList': 'workStatuses',
      '/Department/GetList': 'departments',
      '/WorkShift/GetList': 'workShifts',
      '/JobTitle/GetList': 'jobTitles',
      '/Locale/GetList': 'locales',
    } as const;
    for (const [path, name] of Object.entries(lists)) {
      const list = (await call(sb, v2(path))).json();
      expect(Array.isArray(list), path).toBe(true);
      expect(list.length, path).toBe((await truth(sb, name)).length);
      for (const item of list) endpoints[name].item.parse(item);
    }
    const titles = (await call(sb, v2('/JobTitle/GetList'))).json();
    const canonical = await truth(sb, 'jobTitles');
    expect(titles[0]).toEqual({ JobTitle: canonical[0].JobTitleId, JobTitleName: canonical[0].JobTitleName });
  });
});
