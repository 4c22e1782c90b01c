import { pino } from 'pino';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { ConfigError } from '../../src/config.ts';
import { settingsOf, type PushRunnerOptions } from '../../src/push/options.ts';
import { createPushRunner } from '../../src/push/runner.ts';
import { createSealer } from '../../src/warehouse/secret.ts';
import { openWarehouse, type Warehouse } from '../../src/warehouse/connection.ts';
import { freshDatabase } from '../support/db.ts';
import { SECRET } from './support.ts';

/** The push runner's options: defaults filled in once, and a bad one refused in one line naming it. */

let warehouse: Warehouse;
let base: PushRunnerOptions;
beforeAll(async () => {
  warehouse = await openWarehouse({ databaseUrl: await freshDatabase() });
  base = { warehouse, clients: new Map(), sealer: createSealer(SECRET), log: pino({ level: 'silent' }) };
});
afterAll(() => warehouse.close());

describe('push runner options', () => {
  it('fills in the documented defaults and keeps what is given', () => {
    const settings = settingsOf(base);
    expect(settings).toMatchObject({ concurrency: 4, sweepMs: 1000, batchSize: 100, maxAttempts: 12 });
    expect(settings.warehouse).toBe(warehouse);
    expect(settingsOf({ ...base, concurrency: 16, sweepMs: 200 })).toMatchObject({
      concurrency: 16,
      sweepMs: 200,
      batchSize: 100,
    });
  });

  it.each([
    [{ concurrency: 0 }, /^push runner option concurrency: /],
    [{ sweepMs: 2.5 }, /^push runner option sweepMs: /],
    [{ batchSize: -1 }, /^push runner option batchSize: /],
    [{ maxAttempts: Number.NaN }, /^push runner option maxAttempts: /],
    [
      { webhook: { url: 'ftp://hooks.example.org/push', token: 'a-token-of-16-chars' } },
      /^push runner option webhook\.url: /,
    ],
    [{ webhook: { url: 'https://hooks.example.org/push', token: '' } }, /^push runner option webhook\.token: /],
  ] as [Partial<PushRunnerOptions>, RegExp][])(
    'refuses %o when the runner is made, naming the option',
    (bad, message) => {
      const made = () => createPushRunner({ ...base, ...bad });
      expect(made).toThrow(ConfigError);
      expect(made).toThrow(message);
    },
  );
});
