import { mkdirSync } from 'node:fs';
import { fileURLToPath } from 'node:url';
import { chromium, type Browser } from 'playwright-core';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { openWarehouse, type Warehouse } from '../../src/warehouse/connection.ts';
import { openRun, storeRunProgress } from '../../src/warehouse/runs.ts';
import { readStatus } from '../../src/ops/status.ts';
import { companyPage } from '../../src/ops/company-page.ts';
import { formatStatus } from '../../src/commands/status.ts';
import { freshDatabase } from '../support/db.ts';
import { defaultSchedule } from '../support/schedule.ts';

/** The progress of runs under way as stored by their process, read by status and drawn in headless Chromium without JavaScript. */

const SHOTS = fileURLToPath(new URL('../../test-results/ops/', import.meta.url));
let wh: Warehouse;
let browser: Browser;

beforeAll(async () => {
  mkdirSync(SHOTS, { recursive: true });
  wh = await openWarehouse({ databaseUrl: await freshDatabase({ migrated: true }) });
  await wh.migrate();
  browser = await chromium.launch({
    executablePath: process.env.CHROMIUM_PATH ?? '/usr/bin/chromium',
    args: ['--no-sandbox'],
  });
});

afterAll(async () => {
  await browser?.close();
  await wh?.close();
});

describe('progress bars', () => {
  it('show each running stream and its company with share and ETA, in the company page and in wfsync status', async () => {
    const at = new Date().toISOString();
    const shifts = await openRun(wh, { companyKey: 'north', stream: 'shift-assignments' });
    const timeOff = await openRun(wh, { companyKey: 'north', stream: 'time-off-requests' });
    const courses = await openRun(wh, { companyKey: 'north', stream: 'individual-certifications' });
    await storeRunProgress(
      wh,
      { companyKey: 'north', id: shifts },
      {
        basis: 'windows',
        fraction: 0.25,
        pagesDone: 100,
        pagesLeft: 300,
        perSecond: 2,
        at,
      },
    );
    await storeRunProgress(
      wh,
      { companyKey: 'north', id: timeOff },
      {
        basis: 'windows',
        fraction: 0.5,
        pagesDone: 20,
        pagesLeft: 20,
        perSecond: 2,
        at,
      },
    );
    await storeRunProgress(
      wh,
      { companyKey: 'north', id: courses },
      {
        basis: 'unknown',
        fraction: null,
        pagesDone: 7,
        pagesLeft: null,
        perSecond: 2,
        at,
      },
    );

    const status = await readStatus(wh, { companies: ['north'], schedule: defaultSchedule });
    const of = (stream: string) => status.streams.find((s) => s.stream === stream)!.progress;
    // Both share 2 requests a second: time-off's 20 pages at 1 a second, then shifts' last 280 at 2.
    expect(of('time-off-requests')).toMatchObject({ fraction: 0.5, etaSeconds: 20 });
    expect(of('shift-assignments')).toMatchObject({ fraction: 0.25, etaSeconds: 160 });
    expect(of('individual-certifications')).toMatchObject({ basis: 'unknown', fraction: null, etaSeconds: null });
    // 120 pages done (100 + 20) of 440.
    expect(status.progress).toEqual([
      { company: 'north', streams: 3, estimated: 2, fraction: 0.2727, etaSeconds: 160 },
    ]);

    const text = formatStatus(status);
    expect(text).toMatch(
      /^north: 3 streams under way, 27% done, about 2 min 40 s left \(1 of 3 streams without an estimate\)$/m,
    );
    expect(text).toMatch(/^ {2}shift-assignments\s+25% \(windows\), about 2 min 40 s left$/m);
    expect(text).toMatch(/^ {2}individual-certifications\s+7 pages, share not known$/m);

    const html = companyPage({
      company: 'north',
      status,
      keys: [],
      viewer: { signedIn: false, canSignIn: false },
      canRun: false,
      canResync: false,
      canSwitch: false,
      events: [],
      audit: [],
      schemaChanges: [],
      resyncs: [],
      now: Date.now(),
    });
    const context = await browser.newContext({ javaScriptEnabled: false, viewport: { width: 1400, height: 900 } });
    const page = await context.newPage();
    await page.setContent(html);
    const bar = page.locator('tr[data-stream="shift-assignments"] progress');
    expect(await bar.getAttribute('value')).toBe('0.2500');
    expect(await bar.boundingBox()).toMatchObject({ width: expect.any(Number) });
    expect((await bar.boundingBox())!.width).toBeGreaterThan(50);
    expect(await page.locator('tr[data-stream="time-off-requests"] .progress').innerText()).toMatch(
      /50% \(windows\), about 20 s left/,
    );
    expect(await page.locator('tr[data-stream="individual-certifications"] .progress').innerText()).toBe(
      '7 pages, share not known',
    );
    expect(await page.locator('#progress li').innerText()).toMatch(
      /north: 3 streams under way, 27% done, about 2 min 40 s left/,
    );
    expect(await page.locator('#progress progress').getAttribute('value')).toBe('0.2727');
    await page.screenshot({ path: `${SHOTS}progress-bars.png`, fullPage: true });
    await context.close();
  });
});
