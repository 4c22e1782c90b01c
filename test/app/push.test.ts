import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { startSandbox, type RunningSandbox } from '../../src/sandbox/index.ts';
import { startTestApp, sample, type TestApp } from '../ops/helpers.ts';
import { newcomer } from '../push/support.ts';
import { waitFor } from '../support/processes.ts';

/** The push path as `wfsync start` wires it: intake on the ops server, the runner beside the jobs, metrics and the retry hook. */

const TOKEN = 'app-push-token-0123456789';
let sandbox: RunningSandbox;
let t: TestApp;

beforeAll(async () => {
  sandbox = await startSandbox({ port: 0, seed: 9, size: 'tiny', rateLimit: { limit: 100, periodMs: 1000 } });
  t = await startTestApp(sandbox, { WFS_PUSH_TOKEN: TOKEN }, async (app) => {
    await app.push({ serve: true, run: true });
    await app.startRunners();
  });
});

afterAll(async () => {
  await t?.close();
  await sandbox?.close();
});

describe('push in the composed app', () => {
  it('a change posted to the ops server is applied at the service, readable by id, and counted in /metrics', async () => {
    const person = newcomer();
    const posted = await t.get('/push/individuals', {
      method: 'POST',
      headers: { authorization: `Bearer ${TOKEN}`, 'content-type': 'application/json' },
      body: JSON.stringify({ ...person, changeId: 'hr-1' }),
    });
    expect(posted.status).toBe(202);
    const [accepted] = (await posted.json()) as { id: number; changeId: string }[];
    expect(accepted!.changeId).toBe('hr-1');

    const applied = await waitFor(
      'the change applied',
      async () => {
        const res = await t.get(`/push/${accepted!.id}`, { headers: { authorization: `Bearer ${TOKEN}` } });
        const change = (await res.json()) as { status: string; serviceId?: number };
        return change.status === 'applied' ? change : undefined;
      },
      30_000,
    );
    expect(applied.serviceId).toEqual(expect.any(Number));
    const truth = (await (await fetch(`${sandbox.url}/_sandbox/truth/individuals`)).json()) as {
      EmployeeNumber: string;
    }[];
    expect(truth.filter((i) => i.EmployeeNumber === person.EmployeeNumber)).toHaveLength(1);

    const metrics = await (await t.get('/metrics')).text();
    expect(sample(metrics, 'wfsync_push_changes_total', { kind: 'individual', outcome: 'applied' })).toBe(1);
  });

  it('the push API refuses a wrong token', async () => {
    const res = await t.get('/push/individuals', {
      method: 'POST',
      headers: { authorization: 'Bearer nope' },
      body: '{}',
    });
    expect(res.status).toBe(401);
  });
});
