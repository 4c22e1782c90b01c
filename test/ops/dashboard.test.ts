import { mkdirSync } from 'node:fs';
import { fileURLToPath } from 'node:url';
import { chromium, type Browser, type Page } from 'playwright-core';
import { afterAll, beforeAll, describe, expect, inject, it } from 'vitest';
import { jobs } from '../../jobs/index.ts';
import { startSandbox, type RunningSandbox } from '../../src/sandbox/index.ts';
import { DEFAULT_API_KEY, SCOPES } from '../../src/sandbox/keys.ts';
import { feedRuns } from '../../src/queue/feeder.ts';
import { enqueueRun, queuedRuns } from '../../src/queue/sync-queue.ts';
import { streams } from '../../src/resources/index.ts';
import { runStreams, selectStreams } from '../../src/sync/runner.ts';
import { insertReject } from '../support/rejects.ts';
import { emptySyncQueue } from '../support/sync-queue.ts';
import { startTestApp, type TestApp } from './helpers.ts';

/** The dashboard in headless Chromium, over a real warehouse, Redis and the sandbox. */

const SHOTS = fileURLToPath(new URL('../../test-results/ops/', import.meta.url));
const TOKEN = 'dashboard-token-for-tests';
const SOUTH_KEY = 'south-key-without-individuals';
let sandbox: RunningSandbox;
let t: TestApp;
let browser: Browser;
let page: Page;

beforeAll(async () => {
  mkdirSync(SHOTS, { recursive: true });
  sandbox = await startSandbox({
    port: 0,
    seed: 5,
    size: 'tiny',
    rateLimit: { limit: 100, periodMs: 1000 },
    // south's key may not read individuals: its individuals runs fail.
    keys: [
      { key: DEFAULT_API_KEY, scopes: [...SCOPES] },
      { key: SOUTH_KEY, scopes: SCOPES.filter((s) => s !== 'individuals') },
    ],
  });
  t = await startTestApp(sandbox, {
    WFS_COMPANIES: JSON.stringify([
      { key: 'north', apiKey: sandbox.apiKey, baseUrl: sandbox.url },
      { key: 'south', apiKey: SOUTH_KEY, baseUrl: sandbox.url },
    ]),
    // Its own Redis database: the board shows this test's jobs only.
    REDIS_URL: `${inject('redisUrl')}/7`,
    // Reference lists every 4 seconds, so a stream goes stale within seconds.
    WFS_CRON_REFERENCE_LISTS: '*/4 * * * * *',
    WFS_DASHBOARD_TOKEN: TOKEN,
  });
  await emptySyncQueue(await t.app.syncQueue(), await t.app.redis());
  browser = await chromium.launch({
    executablePath: process.env.CHROMIUM_PATH ?? '/usr/bin/chromium',
    args: ['--no-sandbox'],
  });
  page = await browser.newPage({ viewport: { width: 1400, height: 1000 } });
});

afterAll(async () => {
  await browser?.close();
  await t?.close();
  await sandbox?.close();
});

const row = (company: string, stream: string) => page.locator(`tr[data-company="${company}"][data-stream="${stream}"]`);

describe('the status page', () => {
  it('shows every stream of every company with its freshness; a stream turns stale; a failed run shows its error', async () => {
    const env = await t.app.environment();
    const [north, south] = env.contexts;
    const failed = await runStreams(south!, selectStreams(['individuals']));
    const error = failed.streams[0]!.error!;
    expect(error).toBeTruthy();
    const ok = await runStreams(north!, selectStreams(['individuals']));
    const departmentsAt = Date.now();
    const ref = await runStreams(north!, selectStreams(['departments']));
    expect(ok.failed + ref.failed).toBe(0);

    // The overview: one row per company, the failing one first, each linking to its page.
    await page.goto(`${t.server.url}/`);
    const companies = page.locator('#companies tbody tr');
    expect(await companies.evaluateAll((rs) => rs.map((r) => r.getAttribute('data-company')))).toEqual([
      'south',
      'north',
    ]);
    expect(await page.locator('#companies tr[data-company="south"]').getAttribute('class')).toBe('failing');
    expect(await page.locator('#companies tr[data-company="south"] td').nth(2).textContent()).toBe(
      'individuals failed',
    );
    for (const company of ['north', 'south']) {
      await page.goto(`${t.server.url}/`);
      await page.click(`#companies a[href="/companies/${company}"]`);
      await page.waitForURL(`${t.server.url}/companies/${company}`);
      const rows = page.locator(`table.streams tr[data-company="${company}"]`);
      expect(await rows.count()).toBe(streams.length);
      for (const badge of await rows.locator('.badge').allTextContents())
        expect(['fresh', 'late', 'stale']).toContain(badge);
    }
    await page.goto(`${t.server.url}/companies/south`);
    expect(await row('south', 'individuals').locator('.failed').textContent()).toBe('failed');
    expect(await row('south', 'individuals').locator('td.error').textContent()).toBe(error);
    await page.goto(`${t.server.url}/companies/north`);
    expect(await row('north', 'departments').getAttribute('data-freshness')).toBe('fresh');
    expect(await row('north', 'individuals').getAttribute('data-freshness')).toBe('fresh');
    expect(await row('north', 'shift-assignments').getAttribute('data-freshness')).toBe('stale');
    expect(await row('north', 'shift-assignments').locator('td').nth(2).textContent()).toBe('never');
    expect(error).toMatch(/403/);
    // The API key's budget, live from this process's requests.
    expect(await page.locator('#keys tr[data-company="north"] td').nth(3).textContent()).toBe(
      String(ok.requests + ref.requests + 1),
    );
    await page.screenshot({ path: `${SHOTS}status.png`, fullPage: true });

    // Reference lists run every 4 s: 8 s without a success make departments stale.
    await new Promise((r) => setTimeout(r, departmentsAt + 8500 - Date.now()));
    await page.reload();
    expect(await row('north', 'departments').getAttribute('data-freshness')).toBe('stale');
    expect(
      await row('north', 'departments')
        .locator('.badge')
        .evaluate((e) => e.ownerDocument.defaultView!.getComputedStyle(e).backgroundColor),
    ).toBe('rgb(253, 220, 220)');
    // Individuals run every 30 minutes: still fresh.
    expect(await row('north', 'individuals').getAttribute('data-freshness')).toBe('fresh');
    expect(
      await row('north', 'individuals')
        .locator('.badge')
        .evaluate((e) => e.ownerDocument.defaultView!.getComputedStyle(e).backgroundColor),
    ).toBe('rgb(217, 245, 225)');
  });

  it('links a stream to its rejects, which show the reason to all and the raw payload signed in, newest first', async () => {
    const wh = await t.app.warehouse();
    await insertReject(wh, {
      company: 'north',
      stream: 'individuals',
      raw: { ServiceId: 901, FirstName: 'Ada', Birthdate: 'yesterday' },
      reason: 'Birthdate: expected a date',
      secondsAgo: 3600,
    });
    await insertReject(wh, {
      company: 'north',
      stream: 'individuals',
      raw: { ServiceId: 902, FirstName: 'Grace', WorkStatus: 17 },
      reason: 'WorkStatus: expected an object',
    });
    await page.goto(`${t.server.url}/companies/north`);
    const link = row('north', 'individuals').locator('a[href*="/rejects"]');
    expect(await link.textContent()).toBe('2');
    await link.click();
    await page.waitForSelector('#rejects');
    const rejects = page.locator('tr.reject');
    expect(await rejects.count()).toBe(2);
    expect(await rejects.nth(0).locator('td.error').textContent()).toBe('WorkStatus: expected an object');
    // Payloads hold personal data: not shown until signed in.
    expect(await page.locator('#rejects pre').count()).toBe(0);
    expect(await page.content()).not.toContain('Grace');
    expect(await page.locator('#payloads-hidden').textContent()).toMatch(/sign in to see them/);
    const rejectsUrl = page.url();
    await page.goto(`${t.server.url}/signin`);
    await page.fill('input[name="token"]', TOKEN);
    await page.click('button:has-text("sign in")');
    await page.waitForURL(`${t.server.url}/`);
    await page.goto(rejectsUrl);
    expect(await page.locator('#payloads-hidden').count()).toBe(0);
    expect(JSON.parse((await rejects.nth(0).locator('pre').textContent())!)).toEqual({
      ServiceId: 902,
      FirstName: 'Grace',
      WorkStatus: 17,
    });
    expect(JSON.parse((await rejects.nth(1).locator('pre').textContent())!)).toEqual({
      ServiceId: 901,
      FirstName: 'Ada',
      Birthdate: 'yesterday',
    });
    await page.screenshot({ path: `${SHOTS}rejects.png`, fullPage: true });
    await page.click('button:has-text("sign out")');
    await page.goto(rejectsUrl);
    expect(await page.locator('#rejects pre').count()).toBe(0);
  });
});

describe('/queues', () => {
  it("shows the queue's jobs only signed in, refuses a retry without sign-in, and lets a signed-in operator act", async () => {
    const queue = await t.app.syncQueue();
    const firedAt = new Date('2026-01-01T06:00:00Z');
    for (const job of jobs.slice(0, 3)) await enqueueRun(queue, { company: 'north', job, firedAt });
    // Given to BullMQ, as a worker with three free slots takes them: bull-board shows what BullMQ holds.
    await feedRuns(queue, await t.app.redis(), 3);

    // Jobs carry entity keys and the service's messages about records: refused to anyone not signed in.
    const board = await page.goto(`${t.server.url}/queues/queue/sync?status=waiting`);
    expect(board!.status()).toBe(403);
    expect(await page.getByText(`north.${jobs[0]!.name}.${firedAt.getTime()}`).count()).toBe(0);
    expect((await page.request.get(`${t.server.url}/queues/api/queues`)).status()).toBe(403);

    // Acting on jobs acts on Redis: refused to anyone not signed in.
    const refused = await page.request.put(`${t.server.url}/queues/api/queues/sync/retry/failed`);
    expect(refused.status()).toBe(403);
    const refusedRun = await page.request.post(`${t.server.url}/actions/run`, {
      form: { company: 'north', stream: 'departments' },
    });
    expect(refusedRun.status()).toBe(403);
    await page.goto(`${t.server.url}/companies/north`);
    expect(await page.locator('form[action="/actions/run"]').count()).toBe(0);

    await page.goto(`${t.server.url}/signin`);
    await page.fill('input[name="token"]', 'not the token');
    await page.click('button:has-text("sign in")');
    expect(await page.locator('.failed').textContent()).toMatch(/not the dashboard token/);
    await page.fill('input[name="token"]', TOKEN);
    await page.click('button:has-text("sign in")');
    await page.waitForURL(`${t.server.url}/`);
    expect(await page.locator('button:has-text("sign out")').count()).toBe(1);

    await page.goto(`${t.server.url}/queues/queue/sync?status=waiting`);
    for (const job of jobs.slice(0, 3)) {
      await page.getByText(`north.${job.name}.${firedAt.getTime()}`).first().waitFor({ timeout: 15_000 });
    }
    await page.screenshot({ path: `${SHOTS}queues.png`, fullPage: true });
    await page.goto(`${t.server.url}/companies/north`);

    const allowed = await page.request.put(`${t.server.url}/queues/api/queues/sync/retry/failed`);
    expect(allowed.status()).not.toBe(403);
    expect(allowed.status()).toBeLessThan(500);

    // Run a stream now: it is queued for the workers.
    await row('north', 'departments').locator('button:has-text("run now")').click();
    await page.waitForSelector('.flash');
    expect(await page.locator('.flash').textContent()).toBe('departments of north is queued');
    // Queued in the queue's own order until a worker has a free slot (companies take turns).
    const waiting = await queuedRuns(await t.app.redis());
    expect(waiting.map((r) => r.data)).toContainEqual(
      expect.objectContaining({ company: 'north', job: 'manual-departments', streams: ['departments'] }),
    );
    await page.screenshot({ path: `${SHOTS}signed-in.png`, fullPage: true });
  });
});
