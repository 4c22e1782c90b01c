import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import type { Individual } from '../../src/source/schemas/index.ts';
import { runStreams, selectStreams } from '../../src/sync/runner.ts';
import { createHmac } from 'node:crypto';
import { previewPush } from '../../src/push/preview.ts';
import type { FieldPolicy } from '../../src/push/field-policy.ts';
import { createPushApi } from '../../src/push/http.ts';
import { openTestSync, type TestSync } from '../support/sync-context.ts';
import { newcomer, openRig, type PushRig } from './support.ts';

/** A dry run against a warehouse synced from the sandbox: what each change would do, and nothing written anywhere. */

let rig: PushRig;
let sync: TestSync;
beforeAll(async () => {
  rig = await openRig();
  sync = await openTestSync(rig.sandbox, { databaseUrl: rig.databaseUrl });
  await runStreams(sync.ctx, selectStreams(['individuals']));
}, 60_000);
afterAll(async () => {
  await sync?.close();
  await rig?.close();
});

const people = () => rig.sandbox.data.truth('individuals') as Individual[];
const outbox = () => rig.warehouse.sql.unsafe(`select * from "${rig.warehouse.schema}".push_outbox order by id`);
const warehouseRows = () =>
  rig.warehouse.sql.unsafe(`select service_id, _hash from "${rig.warehouse.schema}".individuals order by service_id`);

describe('a dry run of a push', () => {
  it('says insert or update, of which record, what changes and what stays, and what it costs', async () => {
    const known = people().find((i) => i.EmployeeNumber && i.FirstName && i.LastName)!;
    const fresh = newcomer();
    const preview = await previewPush(rig.intake, 'individual', [
      {
        EmployeeNumber: known.EmployeeNumber,
        ServiceId: known.ServiceId,
        FirstName: `${known.FirstName}x`,
        LastName: known.LastName,
        SSN: '123456789',
      },
      fresh,
      { EmployeeNumber: 'E-1', Status: 'Retired', IndividualId: 5 },
    ]);
    expect(preview).toMatchObject({ dryRun: true, valid: 2, refused: 1, inserts: 1, updates: 1 });
    const [update, insert, refused] = preview.changes;
    expect(update).toMatchObject({
      valid: true,
      action: 'update',
      record: { ServiceId: known.ServiceId },
      changed: { FirstName: [known.FirstName, `${known.FirstName}x`] },
      unchanged: expect.arrayContaining(['LastName', 'EmployeeNumber']),
      notCompared: { SSN: 'never kept in the warehouse' },
      requests: 2,
    });
    expect(insert).toMatchObject({ valid: true, action: 'insert', record: null, requests: 2 });
    expect(insert!.changed!.FirstName).toEqual([null, 'Ada']);
    expect(refused).toMatchObject({ valid: false, index: 2 });
    expect(Object.keys(refused!.refused!)).toEqual(expect.arrayContaining(['Status', 'IndividualId']));
    expect(preview.requests).toBe(4);
  });

  it('over HTTP (dryRun=true) stores and sends nothing: the outbox, the warehouse and the sandbox are the same after', async () => {
    const token = 'preview-token';
    const api = createPushApi({ intake: rig.intake, token });
    const before = { outbox: await outbox(), rows: await warehouseRows(), truth: JSON.stringify(people()) };
    const requestsBefore = rig.sandbox.stats().requests;
    const sample = people()
      .filter((i) => i.EmployeeNumber)
      .slice(0, 20);
    const body = [...sample.map((i) => ({ ServiceId: i.ServiceId, LastName: `${i.LastName}-dry` })), newcomer()];
    const res = await api.request('/push/individuals?dryRun=true', {
      method: 'POST',
      headers: { authorization: `Bearer ${token}`, 'content-type': 'application/json' },
      body: JSON.stringify(body),
    });
    expect(res.status).toBe(200);
    const preview = (await res.json()) as {
      updates: number;
      inserts: number;
      changes: { changed: Record<string, unknown> }[];
    };
    expect(preview).toMatchObject({ updates: sample.length, inserts: 1 });
    expect(preview.changes[0]!.changed).toEqual({ LastName: [sample[0]!.LastName, `${sample[0]!.LastName}-dry`] });
    await new Promise((r) => setTimeout(r, 500));
    expect(await outbox()).toEqual(before.outbox);
    expect(await warehouseRows()).toEqual(before.rows);
    expect(JSON.stringify(people())).toBe(before.truth);
    expect(rig.sandbox.stats().requests).toBe(requestsBefore);
    const bad = await api.request('/push/individuals?dryRun=maybe', {
      method: 'POST',
      headers: { authorization: `Bearer ${token}` },
      body: '{}',
    });
    expect(bad.status).toBe(400);
  });

  it("compares a field the company's policy hashes by its hash, and shows no value the warehouse does not hold; a blocked field is not compared", async () => {
    const hmac = (v: string) => createHmac('sha256', 'policy-test-key').update(v).digest('hex');
    const policy: FieldPolicy = {
      fieldPolicy: async () =>
        new Map([
          ['LastName', 'hash'],
          ['MiddleName', 'block'],
        ] as const),
      hashValue: hmac,
    };
    const person = [...people()].reverse().find((i) => i.LastName)!;
    // What such a warehouse holds: the HMAC of the last name.
    await rig.warehouse.sql.unsafe(
      `update "${rig.warehouse.schema}".individuals set last_name = $1 where service_id = $2`,
      [hmac(person.LastName!), person.ServiceId],
    );
    const preview = await previewPush({ ...rig.intake, policy }, 'individual', [
      { ServiceId: person.ServiceId, LastName: person.LastName, MiddleName: 'Quincy' },
      { ServiceId: person.ServiceId, LastName: 'Otherwise' },
    ]);
    expect(preview.changes[0]).toMatchObject({
      changed: {},
      unchanged: ['LastName'],
      notCompared: { MiddleName: expect.stringMatching(/blocked by the company's personal-data policy/) },
    });
    expect(preview.changes[1]!.changed).toEqual({ LastName: [hmac(person.LastName!), hmac('Otherwise')] });
    const answer = JSON.stringify(preview);
    for (const value of [person.LastName!, 'Otherwise', 'Quincy']) expect(answer).not.toContain(`"${value}"`);
  });
});
