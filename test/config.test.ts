import { describe, expect, it } from 'vitest';
import { ConfigError, defaultConcurrency, loadConfig, parseRateLimit, unsyncedFormsNotice } from '../src/config.ts';

describe('settings', () => {
  it('runs on embedded defaults with no settings: the sandbox, 100 requests per 60 s', () => {
    const c = loadConfig({});
    expect(c.sandbox).toBe(true);
    expect(c.rateLimit).toEqual({ limit: 100, periodMs: 60_000 });
    expect(c.dbSchema).toBe('workforce');
    expect(c.companies).toHaveLength(1);
  });

  it('reads a compressed rate-limit period', () => {
    expect(parseRateLimit('100/1s')).toEqual({ limit: 100, periodMs: 1000 });
    expect(parseRateLimit('5/250ms')).toEqual({ limit: 5, periodMs: 250 });
    expect(parseRateLimit('1000/1m')).toEqual({ limit: 1000, periodMs: 60_000 });
  });

  it('stops on a bad setting with one line naming it', () => {
    expect(() => loadConfig({ WFS_RATE_LIMIT: 'fast' })).toThrow(/^setting WFS_RATE_LIMIT: /);
    expect(() => loadConfig({ WFS_FORM_IDS: '1,x' })).toThrow(/setting WFS_FORM_IDS/);
    expect(() => loadConfig({ DATABASE_URL: 'mysql://x' })).toThrow(/setting DATABASE_URL/);
    expect(() => loadConfig({ WFS_BASE_URL: 'https://api.example.test' })).toThrow(ConfigError);
    expect(() => loadConfig({ WFS_BASE_URL: 'https://api.example.test' })).toThrow(/WFS_API_KEY/);
  });

  it('names several companies, each with its own key', () => {
    const c = loadConfig({
      WFS_COMPANIES: JSON.stringify([
        { key: 'north', apiKey: 'k1', baseUrl: 'http://127.0.0.1:1' },
        { key: 'south', apiKey: 'k2', baseUrl: 'http://127.0.0.1:2' },
      ]),
    });
    expect(c.companies.map((x) => x.key)).toEqual(['north', 'south']);
    expect(c.sandbox).toBe(false);
  });

  it('takes cron overrides per job', () => {
    expect(loadConfig({ WFS_CRON_SHIFT_ASSIGNMENTS: '*/5 * * * *' }).cron).toEqual({
      'shift-assignments': '*/5 * * * *',
    });
  });

  it('runs two jobs per company at once unless told, so every key can have one under way', () => {
    expect(loadConfig({}).workerConcurrency).toBe(4);
    const companies = Array.from({ length: 100 }, (_, i) => ({
      key: `c${i}`,
      apiKey: `k${i}`,
      baseUrl: 'https://api.example.test',
    }));
    expect(loadConfig({ WFS_COMPANIES: JSON.stringify(companies) }).workerConcurrency).toBe(defaultConcurrency(100));
    expect(
      loadConfig({ WFS_COMPANIES: JSON.stringify(companies), WFS_WORKER_CONCURRENCY: '8' }).workerConcurrency,
    ).toBe(8);
    expect(() => loadConfig({ WFS_WORKER_CONCURRENCY: '0' })).toThrow(/^setting WFS_WORKER_CONCURRENCY: /);
  });

  it('runs no more jobs at once than the cores can work, 128 each, however many companies', () => {
    expect(defaultConcurrency(1000, 2)).toBe(256);
    expect(defaultConcurrency(100, 2)).toBe(200);
    expect(defaultConcurrency(1000, 16)).toBe(1000);
  });
});

describe('empty settings', () => {
  it('treats an empty value as unset, as compose and .env files write them', () => {
    const c = loadConfig({ WFS_BASE_URL: '', WFS_API_KEY: '', WFS_FORM_IDS: '', WFS_RATE_LIMIT: '' });
    expect(c.sandbox).toBe(true);
    expect(c.formIds).toEqual([]);
    expect(c.rateLimit).toEqual({ limit: 100, periodMs: 60_000 });
  });
});

describe('settings that hold secrets or addresses', () => {
  it('refuses a base URL without http or https', () => {
    expect(() => loadConfig({ WFS_BASE_URL: 'localhost:44010', WFS_API_KEY: 'k' })).toThrow(
      /^setting WFS_BASE_URL: expected an http/,
    );
    expect(loadConfig({ WFS_BASE_URL: 'https://api.example.test/v2', WFS_API_KEY: 'k' }).companies[0]!.baseUrl).toBe(
      'https://api.example.test/v2',
    );
  });

  it('says what shape WFS_COMPANIES takes and never quotes it', () => {
    const secret = 'k-secret-0042';
    for (const value of [
      JSON.stringify({ key: 'a', apiKey: secret }),
      `[{"key":"a","apiKey":"${secret}"`,
      `/no/such/${secret}.json`,
      JSON.stringify([{ key: 'a b', apiKey: secret }]),
    ]) {
      let message = '';
      try {
        loadConfig({ WFS_COMPANIES: value });
      } catch (e) {
        message = (e as Error).message;
      }
      expect(message, value).toMatch(/^setting WFS_COMPANIES: expected a JSON array of \{key, apiKey/);
      expect(message, value).not.toContain(secret);
    }
  });
});

describe('forms not synced', () => {
  const real = { WFS_BASE_URL: 'https://api.example.test', WFS_API_KEY: 'k' };

  it('says so against a real service without form ids or run types, naming the settings', () => {
    expect(unsyncedFormsNotice(loadConfig(real))).toBe(
      'form responses are not synced (set WFS_FORM_IDS=12,34 or formIds in WFS_COMPANIES); ' +
        'run-log form responses are not synced (set WFS_RUN_TYPE_IDS=1,2 or runTypeIds in WFS_COMPANIES)',
    );
    expect(unsyncedFormsNotice(loadConfig({ ...real, WFS_FORM_IDS: '4' }))).toMatch(
      /^run-log form responses are not synced/,
    );
    expect(unsyncedFormsNotice(loadConfig({ ...real, WFS_FORM_IDS: '4', WFS_RUN_TYPE_IDS: '2' }))).toBeUndefined();
  });

  it('names the companies left out, and says nothing for the sandbox', () => {
    const companies = JSON.stringify([
      { key: 'north', apiKey: 'k1', baseUrl: 'https://a.example.test', formIds: [1], runTypeIds: [2] },
      { key: 'south', apiKey: 'k2', baseUrl: 'https://b.example.test', formIds: [1] },
    ]);
    expect(unsyncedFormsNotice(loadConfig({ WFS_COMPANIES: companies }))).toBe(
      'run-log form responses are not synced for south (set WFS_RUN_TYPE_IDS=1,2 or runTypeIds in WFS_COMPANIES)',
    );
    expect(unsyncedFormsNotice(loadConfig({}))).toBeUndefined();
  });
});
