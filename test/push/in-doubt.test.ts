import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import type { RequestEvent } from '../../src/observers.ts';
import type { FaultSpec } from '../../src/sandbox/faults.ts';
import type { Individual, IndividualCertification } from '../../src/source/schemas/index.ts';
import { pushCertifications, pushIndividuals } from '../../src/push/intake.ts';
import { newcomer, openRig, type PushRig } from './support.ts';

/**
 * An answer to a write that is lost or ambiguous (the connection dropped after the write was applied, a body cut
 * short, a bare 304) makes the change in doubt; a lookup settles it before anything is sent again, so the write
 * is applied once. The faults are the sandbox's own, on the next write only.
 */

let rig: PushRig;
/** Every request the client sent, in order. */
const requests: RequestEvent[] = [];
const inDoubt: number[] = [];
/** A fault armed for the next write: cleared the moment the client has seen that write's attempt end. */
let armed = false;

beforeAll(async () => {
  rig = await openRig();
  rig.observers.add({
    request: (e) => {
      requests.push(e);
      if (armed && e.method === 'POST') {
        armed = false;
        rig.sandbox.setFaults({});
      }
    },
    push: (e) => void (e.outcome === 'in_doubt' && inDoubt.push(e.latencyMs)),
  });
});
afterAll(async () => {
  await rig?.close();
});

type Kind = 'lost' | 'truncate' | 'notModified';

/** Arms `fault` for the next write; what was seen from then on, and how often the sandbox applied the fault. */
function nextWrite(fault: FaultSpec): { requests: RequestEvent[]; inDoubt: number[]; applied: number } {
  const kind = Object.keys(fault)[0] as Kind;
  const from = { requests: requests.length, inDoubt: inDoubt.length, applied: rig.sandbox.stats().faults[kind] };
  armed = true;
  rig.sandbox.setFaults({ ...fault, only: 'writes' });
  return {
    get requests() {
      return requests.slice(from.requests);
    },
    get inDoubt() {
      return inDoubt.slice(from.inDoubt);
    },
    get applied() {
      return rig.sandbox.stats().faults[kind] - from.applied;
    },
  };
}

/** The requests to one endpoint. */
const writesOf = (seen: RequestEvent[], endpoint: string) => seen.filter((r) => r.endpoint === endpoint);

const FAULTS: [string, FaultSpec][] = [
  ['lost', { lost: 1 }],
  ['truncated', { truncate: 1 }],
  ['304', { notModified: 1 }],
];

describe('in-doubt changes', () => {
  it.each(FAULTS)(
    'an individual Insert whose answer is %s is found by its key, not inserted twice',
    async (_name, fault) => {
      const p = newcomer();
      const seen = nextWrite(fault);
      const r = await pushIndividuals(rig.intake, [p]);
      if (!r.ok) throw new Error('refused');
      const [s] = await rig.settled([r.accepted[0]!.id]);
      expect(s).toMatchObject({ status: 'applied', attempts: 2 });
      expect(seen.applied).toBe(1);
      expect(seen.inDoubt).toHaveLength(1);
      // One Insert, and after its ambiguous answer the next request is a lookup, not a resend.
      const sent = seen.requests;
      const insert = sent.findIndex((x) => x.endpoint === 'individualInsert');
      expect(writesOf(sent, 'individualInsert')).toHaveLength(1);
      expect(sent[insert + 1]).toMatchObject({ endpoint: 'individualByEmployeeNumber', method: 'GET' });
      const applied = (rig.sandbox.data.truth('individualInsert') as { EmployeeNumber?: string }[]).filter(
        (w) => w.EmployeeNumber === p.EmployeeNumber,
      );
      expect(applied).toHaveLength(1);
      const mine = (rig.sandbox.data.truth('individuals') as Individual[]).filter(
        (i) => i.EmployeeNumber === p.EmployeeNumber,
      );
      expect(mine).toHaveLength(1);
      expect(s!.serviceId).toBe(mine[0]!.ServiceId);
    },
  );

  it.each(FAULTS)(
    "a credential Insert whose answer is %s is found in the holder's list, not inserted twice",
    async (name, fault) => {
      const holder = (rig.sandbox.data.truth('individuals') as Individual[]).find(
        (i) => i.EmployeeNumber && i.Status === 'Active',
      )!;
      const cert = (rig.sandbox.data.truth('certifications') as { CertificationId: number }[])[1]!;
      const number = `INDOUBT-${name}`;
      const seen = nextWrite(fault);
      const r = await pushCertifications(rig.intake, [
        { ServiceId: holder.ServiceId, CertificationId: cert.CertificationId, CertificationNumber: number },
      ]);
      if (!r.ok) throw new Error('refused');
      const [s] = await rig.settled([r.accepted[0]!.id]);
      expect(s).toMatchObject({ status: 'applied', attempts: 2 });
      expect(seen.applied).toBe(1);
      expect(seen.inDoubt).toHaveLength(1);
      const sent = seen.requests;
      const insert = sent.findIndex((x) => x.endpoint === 'certificationInsert');
      expect(writesOf(sent, 'certificationInsert')).toHaveLength(1);
      expect(sent[insert + 1]).toMatchObject({ endpoint: 'individualCertifications', method: 'GET' });
      const list = rig.sandbox.data.truth('individualCertifications', {
        ServiceId: holder.ServiceId,
        IncludeDeleted: true,
      }) as IndividualCertification[];
      const mine = list.filter((c) => c.CertificationNumber === number);
      expect(mine).toHaveLength(1);
      expect(s!.individualCertificationId).toBe(mine[0]!.IndividualCertificationId);
    },
  );
});
