import { createHmac } from 'node:crypto';
import { createServer, type Server } from 'node:http';
import type { AddressInfo } from 'node:net';
import { serve, type ServerType } from '@hono/node-server';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { createPushApi } from '../../src/push/http.ts';
import type { Individual } from '../../src/source/schemas/index.ts';
import { newcomer, openRig, type PushRig } from './support.ts';
import { waitFor } from '../support/processes.ts';

/** The push API served over HTTP, the webhook receiving signed final states, and the OpenAPI document. */

const TOKEN = 'push-token-0123456789abcdef';
let rig: PushRig;
let server: ServerType;
let base: string;
let hook: Server;
const received: { body: string; signature: string }[] = [];
let failFirst = 2;

beforeAll(async () => {
  hook = createServer((req, res) => {
    let body = '';
    req.on('data', (d: Buffer) => (body += d.toString()));
    req.on('end', () => {
      if (failFirst-- > 0) {
        res.writeHead(500).end();
        return;
      }
      received.push({ body, signature: String(req.headers['x-signature']) });
      res.writeHead(204).end();
    });
  });
  await new Promise<void>((r) => hook.listen(0, '127.0.0.1', r));
  const hookUrl = `http://127.0.0.1:${(hook.address() as AddressInfo).port}/hook`;
  rig = await openRig({ runner: { webhook: { url: hookUrl, token: TOKEN } } });
  const app = createPushApi({ intake: rig.intake, token: TOKEN });
  await new Promise<void>((resolve) => {
    server = serve({ fetch: app.fetch, port: 0, hostname: '127.0.0.1' }, (info) => {
      base = `http://127.0.0.1:${info.port}`;
      resolve();
    });
  });
});
afterAll(async () => {
  await new Promise<void>((r) => server?.close(() => r()));
  await new Promise<void>((r) => hook?.close(() => r()));
  await rig?.close();
});

const post = (path: string, body: string, headers: Record<string, string> = {}) =>
  fetch(`${base}${path}`, {
    method: 'POST',
    body,
    headers: { authorization: `Bearer ${TOKEN}`, 'content-type': 'application/json', ...headers },
  });

describe('push API', () => {
  it('answers 401 to a wrong or missing token, naming how to make one, also without WFS_PUSH_TOKEN', async () => {
    expect((await post('/push/individuals', '{}', { authorization: 'Bearer nope' })).status).toBe(401);
    expect((await fetch(`${base}/push/1`)).status).toBe(401);
    const off = createPushApi({ intake: rig.intake });
    const res = await off.request('/push/individuals', { method: 'POST', body: '{}' });
    expect(res.status).toBe(401);
    expect(((await res.json()) as { error: string }).error).toMatch(/wfsync tokens create, or set WFS_PUSH_TOKEN/);
  });

  it('refuses an array item by item with 422, storing nothing', async () => {
    const good = newcomer({ changeId: 'http-good' });
    const res = await post(
      '/push/individuals',
      JSON.stringify([good, { ...newcomer(), changeId: 'http-bad', SSN: '12-3', JobTitleId: 4 }]),
    );
    expect(res.status).toBe(422);
    const body = (await res.json()) as {
      refused: { index: number; changeId: string; fields: Record<string, string> }[];
    };
    expect(body.refused).toEqual([
      {
        index: 1,
        changeId: 'http-bad',
        fields: { SSN: expect.stringMatching(/9 digits/), JobTitleId: expect.stringMatching(/read only/) },
      },
    ]);
    const list = (await (
      await fetch(`${base}/push`, { headers: { authorization: `Bearer ${TOKEN}` } })
    ).json()) as unknown[];
    expect(list).toEqual([]);
  });

  it('takes NDJSON, answers 202 with ids, and reports the applied state with the service ids; the webhook gets it signed', async () => {
    const a = newcomer({ changeId: 'nd-a' });
    const b = newcomer({ changeId: 'nd-b' });
    const res = await post('/push/individuals', `${JSON.stringify(a)}\n${JSON.stringify(b)}\n`, {
      'content-type': 'application/x-ndjson',
    });
    expect(res.status).toBe(202);
    const accepted = (await res.json()) as { changeId: string; id: number; status: string }[];
    expect(accepted.map((x) => [x.changeId, x.status])).toEqual([
      ['nd-a', 'queued'],
      ['nd-b', 'queued'],
    ]);
    await rig.settled(accepted.map((x) => x.id));
    const one = (await (
      await fetch(`${base}/push/${accepted[0]!.id}`, { headers: { authorization: `Bearer ${TOKEN}` } })
    ).json()) as Record<string, unknown>;
    const truth = (rig.sandbox.data.truth('individuals') as Individual[]).find(
      (i) => i.EmployeeNumber === a.EmployeeNumber,
    )!;
    expect(one).toMatchObject({
      status: 'applied',
      changeId: 'nd-a',
      serviceId: truth.ServiceId,
      individualId: truth.IndividualId,
    });
    const applied = (await (
      await fetch(`${base}/push?status=applied`, { headers: { authorization: `Bearer ${TOKEN}` } })
    ).json()) as unknown[];
    expect(applied).toHaveLength(2);
    const again = (await (await post('/push/individuals', JSON.stringify(a))).json()) as { id: number }[];
    expect(again[0]!.id).toBe(accepted[0]!.id);
    // The receiver failed twice first: the webhook retries until it gets a 2xx.
    await waitFor('both webhook deliveries', async () => received.length >= 2, 15_000);
    for (const r of received)
      expect(r.signature).toBe(`sha256=${createHmac('sha256', TOKEN).update(r.body).digest('hex')}`);
    expect(received.map((r) => (JSON.parse(r.body) as { changeId: string }).changeId).sort()).toEqual(['nd-a', 'nd-b']);
  });

  it('serves an OpenAPI document generated from the intake schemas', async () => {
    const doc = (await (await fetch(`${base}/push/openapi.json`)).json()) as {
      paths: Record<string, Record<string, { requestBody?: { content: Record<string, { schema: unknown }> } }>>;
    };
    expect(Object.keys(doc.paths).sort()).toEqual([
      '/push',
      '/push/certifications',
      '/push/individuals',
      '/push/models',
      '/push/models/{name}',
      '/push/models/{name}/pause',
      '/push/models/{name}/preview',
      '/push/models/{name}/resume',
      '/push/models/{name}/run',
      '/push/models/{name}/runs',
      '/push/verifications',
      '/push/{id}',
    ]);
    const schema = JSON.stringify(
      doc.paths['/push/individuals']!.post!.requestBody!.content['application/json']!.schema,
    );
    for (const f of ['PrimaryEmailAddress', 'LogonId', 'changeId']) expect(schema).toContain(f);
    expect(doc.paths['/push/individuals']!.post!.requestBody!.content).toHaveProperty('application/x-ndjson');
  });
});
