import { afterAll, beforeAll, describe, expect, inject, it } from 'vitest';
import { startSandbox, type RunningSandbox } from '../../src/sandbox/index.ts';
import { runStreams, selectStreams } from '../../src/sync/runner.ts';
import { listEvents } from '../../src/warehouse/events.ts';
import { startTestApp, type TestApp } from '../ops/helpers.ts';
import { waitFor } from '../support/processes.ts';

/** A re-sync asked for through the JSON route, run by a worker through the queue (Redis), not by the server. */

const PUSH_TOKEN = 'push-token-for-resync-tests';
let sandbox: RunningSandbox;
let t: TestApp;

beforeAll(async () => {
  sandbox = await startSandbox({ port: 0, seed: 9, size: 'tiny', rateLimit: { limit: 100, periodMs: 1000 } });
  t = await startTestApp(sandbox, { REDIS_URL: `${inject('redisUrl')}/9`, WFS_PUSH_TOKEN: PUSH_TOKEN }, async (app) => {
    await (await app.syncQueue()).obliterate({ force: true });
    await app.worker();
  });
});

afterAll(async () => {
  await t?.close();
  await sandbox?.close();
});

const resync = (company: string, stream: string, token = PUSH_TOKEN) =>
  t.get(`/api/companies/${company}/streams/${stream}/resync`, {
    method: 'POST',
    headers: { authorization: `Bearer ${token}` },
  });

describe('POST /api/companies/KEY/streams/STREAM/resync', () => {
  it('refuses without the token, an unknown company and a stream not in the catalog, naming the field', async () => {
    expect((await resync('north', 'departments', 'not-the-push-token-at-all')).status).toBe(401);
    const unknown = await resync('west', 'departments');
    expect(unknown.status).toBe(404);
    expect(((await unknown.json()) as { error: string }).error).toMatch(/^key: /);
    const stream = await resync('north', 'nothing-here');
    expect(stream.status).toBe(400);
    expect(((await stream.json()) as { error: string }).error).toMatch(/^stream: /);
  });

  it('queues it for a worker, which reads the stream again and closes the request; both ends are on the timeline', async () => {
    const [north] = (await t.app.environment()).contexts;
    expect((await runStreams(north!, selectStreams(['departments']))).failed).toBe(0);
    const res = await resync('north', 'departments');
    expect(res.status).toBe(202);
    expect(await res.json()).toMatchObject({
      company: 'north',
      stream: 'departments',
      message: expect.stringMatching(/is queued$/),
    });
    const wh = await t.app.warehouse();
    const done = await waitFor(
      'the re-sync to finish',
      async () => {
        const [r] = await wh.sql<
          { outcome: string | null; via: string }[]
        >`select outcome, via from ${wh.sql(wh.schema)}.resync_requests where finished_at is not null`;
        return r;
      },
      30_000,
    );
    expect(done).toEqual({ outcome: 'ok', via: 'api' });
    const queue = await t.app.syncQueue();
    const completed = await queue.getJobs(['completed']);
    expect(completed.map((j) => j.name)).toContain('resync-departments');
    const events = (await listEvents(wh, { companyKey: 'north' }))
      .filter((e) => e.stream === 'departments')
      .map((e) => e.event);
    expect(events).toEqual(['resync_finished', 'resync_requested']);
  });
});
