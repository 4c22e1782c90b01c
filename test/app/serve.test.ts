import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { App } from '../../src/app/index.ts';
import { loadConfig } from '../../src/config.ts';
import { log } from '../../src/log.ts';
import type { OpsServer } from '../../src/ops/server.ts';
import { addCompany } from '../../src/warehouse/company-records.ts';
import { createSealer } from '../../src/warehouse/secret.ts';
import { freshDatabase } from '../support/db.ts';
import { waitFor } from '../support/processes.ts';

/** `wfsync serve` alone (no sync in its process): its status lists the companies added to the table meanwhile. */

const SECRET = 'secret-key-for-serve-tests';
let app: App;
let server: OpsServer;

beforeAll(async () => {
  const config = loadConfig({
    WFS_COMPANIES: JSON.stringify([
      { key: 'north', apiKey: 'north-key-of-serve-tests', baseUrl: 'http://127.0.0.1:9' },
    ]),
    DATABASE_URL: await freshDatabase(),
    WFS_HTTP_PORT: '0',
    WFS_SECRET_KEY: SECRET,
    WFS_COMPANIES_REFRESH_SECONDS: '0.5',
  });
  app = new App(config, log, { live: false, write: () => {}, setLive: () => {} });
  server = await app.serve();
});

afterAll(async () => {
  await app?.stop();
});

const companiesShown = async () => {
  const status = (await (await fetch(`${server.url}/status`)).json()) as { streams: { company: string }[] };
  return new Set(status.streams.map((s) => s.company));
};

describe('a serve-only process', () => {
  it('shows the configured companies, and one added to the table within its refresh interval', async () => {
    expect([...(await companiesShown())]).toEqual(['north']);
    await addCompany(await app.warehouse(), createSealer(SECRET), {
      key: 'south',
      baseUrl: 'http://127.0.0.1:9',
      apiKey: 'south-key-of-serve-tests',
    });
    const shown = await waitFor(
      'south on /status',
      async () => ((await companiesShown()).has('south') ? companiesShown() : undefined),
      10_000,
    );
    expect([...shown].sort()).toEqual(['north', 'south']);
  });
});
