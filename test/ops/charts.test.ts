import { mkdirSync } from 'node:fs';
import { fileURLToPath } from 'node:url';
import { chromium, type Browser, type Locator, type Page } from 'playwright-core';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { startSandbox, type RunningSandbox } from '../../src/sandbox/index.ts';
import { runStreams, selectStreams } from '../../src/sync/runner.ts';
import { insertPushedChange, insertRun, insertRunningRun } from '../support/history.ts';
import { startTestApp, type TestApp } from './helpers.ts';

/** A company page's charts in headless Chromium with JavaScript off, over a real warehouse and the sandbox. */

const SHOTS = fileURLToPath(new URL('../../test-results/ops/', import.meta.url));
const MINUTE = 60_000;
const HOUR = 60 * MINUTE;
let sandbox: RunningSandbox;
let t: TestApp;
let browser: Browser;
let page: Page;
/** The start of the minute the runs are placed against. */
let m0: number;

beforeAll(async () => {
  mkdirSync(SHOTS, { recursive: true });
  sandbox = await startSandbox({ port: 0, seed: 6, size: 'tiny', rateLimit: { limit: 100, periodMs: 1000 } });
  t = await startTestApp(sandbox, {
    WFS_COMPANIES: JSON.stringify([
      { key: 'north', apiKey: sandbox.apiKey, baseUrl: sandbox.url },
      { key: 'south', apiKey: sandbox.apiKey, baseUrl: sandbox.url },
    ]),
    // 100 a minute: the budget line the charts draw.
    WFS_RATE_LIMIT: '100/60s',
  });
  const wh = await t.app.warehouse();
  m0 = Math.floor(Date.now() / MINUTE) * MINUTE;
  const at = (minutes: number) => new Date(m0 + minutes * MINUTE);
  // 400 requests over 20 minutes (20 a minute), overlapped by 50 over 5 (10 a minute), and a failed run 3 hours ago.
  await insertRun(wh, {
    company: 'north',
    stream: 'individuals',
    startedAt: at(-50),
    finishedAt: at(-30),
    requests: 400,
    rows: 120,
  });
  await insertRun(wh, {
    company: 'north',
    stream: 'departments',
    startedAt: at(-40),
    finishedAt: at(-35),
    requests: 50,
    rows: 7,
  });
  await insertRun(wh, {
    company: 'north',
    stream: 'individuals',
    startedAt: at(-180),
    finishedAt: at(-178),
    requests: 10,
    rows: 30,
    outcome: 'failed',
  });
  // A run still going: 60 pages done in its first 15 minutes, by its stored progress.
  await insertRunningRun(wh, { company: 'north', stream: 'schedules', startedAt: at(-20), pagesDone: 60, at: at(-5) });
  // One closed without its counts when its process died: 30 pages in its 10 minutes before.
  await insertRunningRun(wh, {
    company: 'north',
    stream: 'supervisors',
    startedAt: at(-70),
    pagesDone: 30,
    at: at(-60),
    interruptedAt: at(-55),
  });
  // Oldest first, as changes arrive: the outbox's ids grow with their time.
  await insertPushedChange(wh, { company: 'north', status: 'applied', createdAt: new Date(m0 - 30 * HOUR), n: 4 });
  await insertPushedChange(wh, { company: 'north', status: 'failed', createdAt: new Date(m0 - 5 * HOUR), n: 1 });
  await insertPushedChange(wh, { company: 'north', status: 'applied', createdAt: new Date(m0 - 2 * HOUR), n: 5 });
  await insertPushedChange(wh, { company: 'north', status: 'refused', createdAt: new Date(m0 - 2 * HOUR), n: 2 });
  browser = await chromium.launch({
    executablePath: process.env.CHROMIUM_PATH ?? '/usr/bin/chromium',
    args: ['--headless', '--no-sandbox', '--disable-gpu', '--disable-background-networking'],
  });
});

/** A company's page afresh, with no script: the charts are drawn by the server and must read without one. */
async function openStatus(company = 'north'): Promise<void> {
  await page?.context().close();
  const context = await browser.newContext({ viewport: { width: 1400, height: 1000 }, javaScriptEnabled: false });
  page = await context.newPage();
  await page.goto(`${t.server.url}/companies/${company}`);
}

afterAll(async () => {
  await browser?.close();
  await t?.close();
  await sandbox?.close();
});

interface Plot {
  left: number;
  right: number;
  top: number;
  bottom: number;
  yMax: number;
  xFrom: number;
  xTo: number;
}

async function plotOf(svg: Locator): Promise<Plot> {
  const a = async (name: string) => Number(await svg.getAttribute(`data-${name}`));
  return {
    left: await a('plot-left'),
    right: await a('plot-right'),
    top: await a('plot-top'),
    bottom: await a('plot-bottom'),
    yMax: await a('y-max'),
    xFrom: await a('x-from'),
    xTo: await a('x-to'),
  };
}

/** A polyline read back through its chart's axes: minute (ms) → value. */
async function series(svg: Locator, line: Locator): Promise<Map<number, number>> {
  const p = await plotOf(svg);
  const points = (await line.getAttribute('points'))!
    .trim()
    .split(/\s+/)
    .map((xy) => xy.split(',').map(Number) as [number, number]);
  return new Map(
    points.map(([x, y]) => [
      Math.round((p.xFrom + ((x - p.left) / (p.right - p.left)) * (p.xTo - p.xFrom)) / MINUTE) * MINUTE,
      ((p.bottom - y) / (p.bottom - p.top)) * p.yMax,
    ]),
  );
}

/** Screenshots of the charts and the whole page, on a page just loaded: it reloads itself every 10 seconds. */
async function shoot(): Promise<void> {
  for (let attempt = 1; ; attempt++) {
    await openStatus();
    try {
      await page.locator('#charts').screenshot({ path: `${SHOTS}status-charts.png` });
      await page.screenshot({ path: `${SHOTS}status-charts-page.png`, fullPage: true });
      return;
    } catch (e) {
      if (attempt === 3) throw e;
    }
  }
}

const budget = (company: string) => page.locator(`.chart.budget[data-company="${company}"]`);

describe('the status page charts', () => {
  it("draws each key's requests per minute from the runs, a running one's from its progress, against its budget", async () => {
    await openStatus();
    const svg = budget('north').locator('svg');
    const got = await series(svg, svg.locator('polyline.series'));
    const expected = (t: number) => {
      const m = (t - m0) / MINUTE;
      if (m >= -50 && m < -30) return m >= -40 && m < -35 ? 30 : 20;
      if (m >= -20 && m < -5) return 4;
      if (m >= -70 && m < -60) return 3;
      return m >= -180 && m < -178 ? 5 : 0;
    };
    // Six hours, minute by minute.
    expect(got.size).toBeGreaterThanOrEqual(360);
    for (const [minute, value] of got)
      expect.soft(value, new Date(minute).toISOString()).toBeCloseTo(expected(minute), 0);
    expect([...got.values()].reduce((a, v) => a + v, 0)).toBeCloseTo(550, -1);
    // The budget line: 100 a minute.
    const plot = await plotOf(svg);
    const limitY = Number(await svg.locator('line.limit').getAttribute('y1'));
    expect(((plot.bottom - limitY) / (plot.bottom - plot.top)) * plot.yMax).toBeCloseTo(100, 0);
    // The numbers behind it, per hour.
    const rows = await budget('north').locator('details tbody tr').allTextContents();
    expect(rows.length).toBeGreaterThanOrEqual(6);
  });

  it('draws rows written per run for each stream, failed runs apart, with the numbers as a table', async () => {
    await openStatus();
    const runs = page.locator('.chart.runs[data-company="north"]');
    const individuals = runs.locator('svg.stream[data-stream="individuals"]');
    const bars = individuals.locator('rect.run');
    expect(await bars.count()).toBe(2);
    expect(await bars.nth(0).getAttribute('data-rows')).toBe('30');
    expect(await bars.nth(0).getAttribute('class')).toBe('run failed');
    expect(await bars.nth(1).getAttribute('data-rows')).toBe('120');
    const plot = await plotOf(individuals);
    for (const [i, rows] of [
      [0, 30],
      [1, 120],
    ] as const) {
      const h = Number(await bars.nth(i).getAttribute('height'));
      expect((h / (plot.bottom - plot.top)) * plot.yMax).toBeCloseTo(rows, 0);
    }
    // The failed run sits about three hours before the other, on a 24-hour axis.
    const xs = await Promise.all([0, 1].map(async (i) => Number(await bars.nth(i).getAttribute('x'))));
    expect(((xs[1]! - xs[0]!) / (plot.right - plot.left)) * 24).toBeCloseTo(130 / 60, 1);
    expect(await runs.locator('svg.stream[data-stream="departments"] rect.run').getAttribute('data-rows')).toBe('7');
    const table = await runs.locator('details tbody tr').allTextContents();
    // stream, runs, rows, last run, most in a run
    expect(table).toEqual(['departments1777', 'individuals2150120120', 'supervisors1000']);
    // A run that wrote nothing is marked on the axis.
    expect(await runs.locator('svg.stream[data-stream="supervisors"] circle.run.interrupted').count()).toBe(1);
  });

  it('draws pushed changes per hour stacked by status, within the last day only', async () => {
    await openStatus();
    const push = page.locator('.chart.push');
    const svg = push.locator('svg');
    const plot = await plotOf(svg);
    const hour = (ms: number) => new Date(Math.floor(ms / HOUR) * HOUR).toISOString();
    const bar = (status: string, at: number) =>
      svg.locator(`rect.push-bar[data-status="${status}"][data-hour="${hour(at)}"]`);
    const counted = async (b: Locator) =>
      (Number(await b.getAttribute('height')) / (plot.bottom - plot.top)) * plot.yMax;
    expect(await bar('applied', m0 - 2 * HOUR).getAttribute('data-count')).toBe('5');
    expect(await counted(bar('applied', m0 - 2 * HOUR))).toBeCloseTo(5, 1);
    expect(await counted(bar('refused', m0 - 2 * HOUR))).toBeCloseTo(2, 1);
    expect(await counted(bar('failed', m0 - 5 * HOUR))).toBeCloseTo(1, 1);
    // Stacked: refused sits on applied.
    expect(
      Number(await bar('refused', m0 - 2 * HOUR).getAttribute('y')) +
        Number(await bar('refused', m0 - 2 * HOUR).getAttribute('height')),
    ).toBeCloseTo(Number(await bar('applied', m0 - 2 * HOUR).getAttribute('y')), 0);
    // Changes of 30 hours ago are before the hours shown.
    const total = (
      await svg.locator('rect.push-bar').evaluateAll((rs) => rs.map((r) => Number(r.getAttribute('data-count'))))
    ).reduce((a, n) => a + n, 0);
    expect(total).toBe(8);
    expect(await push.locator('.legend').textContent()).toBe('appliedrefusedfailed');
  });

  it("adds this process's own requests minute by minute, which agree with the run's record", async () => {
    const [, south] = (await t.app.environment()).contexts;
    const result = await runStreams(south!, selectStreams(['departments']));
    expect(result.failed).toBe(0);
    expect(result.requests).toBeGreaterThan(0);
    await openStatus('south');
    const svg = budget('south').locator('svg');
    const sum = (s: Map<number, number>) => [...s.values()].reduce((a, v) => a + v, 0);
    // Every request of the key from this process (the run's, and the clock read before it), as the keys table counts them.
    const sent = Number(await page.locator('#keys tr[data-company="south"] td').nth(3).textContent());
    expect(sent).toBeGreaterThanOrEqual(result.requests);
    expect(sum(await series(svg, svg.locator('polyline.own')))).toBeCloseTo(sent, 0);
    expect(sum(await series(svg, svg.locator('polyline.series')))).toBeCloseTo(result.requests, 0);
    await openStatus('north');
    expect(await budget('north').locator('polyline.own').count()).toBe(0);
    await shoot();
  });
});
