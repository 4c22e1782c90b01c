import { mkdirSync } from 'node:fs';
import { fileURLToPath } from 'node:url';
import { chromium, type Browser, type Page } from 'playwright-core';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { startSandbox, type RunningSandbox } from '../../src/sandbox/index.ts';
import { runStreams, selectStreams } from '../../src/sync/runner.ts';
import { startTestApp, type TestApp } from './helpers.ts';

/**
 * An operator's walk in headless Chromium, over a real warehouse and the sandbox, jobs run in-process as `start`
 * runs them without Redis: the overview, a company's page, its timeline, and a re-sync of one stream to its end;
 * a field the service added, on the page of the company that was sent it.
 */

const SHOTS = fileURLToPath(new URL('../../test-results/ops/', import.meta.url));
const TOKEN = 'dashboard-token-for-company-page';
let sandbox: RunningSandbox;
let t: TestApp;
let browser: Browser;
let page: Page;

beforeAll(async () => {
  mkdirSync(SHOTS, { recursive: true });
  // `new-field`: the service sends a field no column maps on every individual.
  sandbox = await startSandbox({
    port: 0,
    seed: 8,
    size: 'tiny',
    rateLimit: { limit: 100, periodMs: 1000 },
    quirks: ['new-field'],
  });
  t = await startTestApp(
    sandbox,
    {
      WFS_COMPANIES: JSON.stringify([
        { key: 'north', apiKey: sandbox.apiKey, baseUrl: sandbox.url },
        { key: 'south', apiKey: sandbox.apiKey, baseUrl: sandbox.url },
      ]),
      WFS_DASHBOARD_TOKEN: TOKEN,
    },
    async (app) => {
      await app.inProcessRunner();
    },
  );
  browser = await chromium.launch({
    executablePath: process.env.CHROMIUM_PATH ?? '/usr/bin/chromium',
    args: ['--no-sandbox'],
  });
  page = await (
    await browser.newContext({ viewport: { width: 1400, height: 1000 }, javaScriptEnabled: false })
  ).newPage();
});

afterAll(async () => {
  await browser?.close();
  await t?.close();
  await sandbox?.close();
});

const departments = async () => {
  const wh = await t.app.warehouse();
  const [r] = await wh.sql<
    { n: number }[]
  >`select count(*)::int as n from ${wh.sql(wh.schema)}.departments where company_key = 'north'`;
  return r!.n;
};

describe('overview → a company → its timeline → a re-sync', () => {
  it('walks to a company, re-syncs one of its streams and sees it finish, its rows readable throughout', async () => {
    const [north] = (await t.app.environment()).contexts;
    const first = await runStreams(north!, selectStreams(['departments']));
    expect(first.failed).toBe(0);
    const before = await departments();
    expect(before).toBeGreaterThan(0);

    await page.goto(`${t.server.url}/`);
    await page.click('#companies a[href="/companies/north"]');
    await page.waitForURL(`${t.server.url}/companies/north`);
    // Its timeline: the company added when the settings named it.
    expect(await page.locator('#timeline tr[data-event="company_added"]').count()).toBe(1);
    // Not signed in: no re-sync button.
    expect(await page.locator('form[action$="/resync"]').count()).toBe(0);

    await page.goto(`${t.server.url}/signin`);
    await page.fill('input[name="token"]', TOKEN);
    await page.click('button:has-text("sign in")');
    await page.waitForURL(`${t.server.url}/`);
    await page.goto(`${t.server.url}/companies/north`);
    await page.locator('tr[data-company="north"][data-stream="departments"] button:has-text("re-sync")').click();
    await page.waitForURL(/\/companies\/north\?done=/);
    expect(await page.locator('.flash').textContent()).toMatch(/^re-sync \d+ of departments of north is asked for/);
    expect(await page.locator('#timeline tr[data-event="resync_requested"][data-stream="departments"]').count()).toBe(
      1,
    );

    // The running start takes it within seconds; the rows stay readable while it reads.
    let state = '';
    for (let i = 0; i < 60 && state !== 'ok'; i++) {
      expect(await departments()).toBe(before);
      await new Promise((r) => setTimeout(r, 500));
      await page.goto(`${t.server.url}/companies/north`);
      state = (await page.locator('#resyncs tr[data-stream="departments"]').first().getAttribute('data-state')) ?? '';
    }
    expect(state).toBe('ok');
    const finished = page.locator('#timeline tr[data-event="resync_finished"][data-stream="departments"]');
    expect(await finished.count()).toBe(1);
    const detail = (await finished.locator('td').nth(4).textContent())!;
    expect(detail).toContain('outcome: ok');
    expect(detail).toContain('deleted: 0');
    expect(await departments()).toBe(before);
    // Today's requests on its usage chart: the first sync's and the re-sync's.
    const today = new Date().toISOString().slice(0, 10);
    expect(
      Number(await page.locator(`.chart.usage rect[data-day="${today}"]`).getAttribute('data-requests')),
    ).toBeGreaterThanOrEqual(first.requests + 1);
    await page.screenshot({ path: `${SHOTS}company-page.png`, fullPage: true });
  });

  it("lists on a company's page the fields its service added, and not on another's", async () => {
    const [north] = (await t.app.environment()).contexts;
    for (let i = 0; i < 2; i++) expect((await runStreams(north!, selectStreams(['individuals']))).failed).toBe(0);

    await page.goto(`${t.server.url}/companies/north`);
    const field = page.locator('#schema-changes tr[data-field="BadgeNumber"] td');
    expect(await field.nth(1).textContent()).toBe('individuals');
    expect(await field.nth(3).textContent()).toBe('string');
    await page.goto(`${t.server.url}/companies/south`);
    expect(await page.locator('#schema-changes tr').count()).toBe(0);
    expect(await page.locator('#schema-changes').textContent()).toMatch(/no field that no column maps/);
  });
});
