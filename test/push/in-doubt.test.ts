import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import type { Individual, IndividualCertification } from '../../src/source/schemas/index.ts';
import { pushCertifications, pushIndividuals } from '../../src/push/intake.ts';
import { startProxy, type RunningProxy } from '../support/proxy.ts';
import { newcomer, openRig, type PushRig } from './support.ts';

/** A lost answer makes a change in doubt; a lookup settles it before anything is sent again. */

let rig: PushRig;
let proxy: RunningProxy;
const lose = new Set<string>();

beforeAll(async () => {
  rig = await openRig({
    baseUrl: async (sb) => {
      proxy = await startProxy(sb.url, {
        fault: (url, method) => {
          if (method !== 'POST') return undefined;
          const path = url.pathname.toLowerCase();
          for (const p of lose) {
            if (path.endsWith(p)) {
              lose.delete(p);
              return 'lost';
            }
          }
          return undefined;
        },
      });
      return proxy.url;
    },
  });
});
afterAll(async () => {
  await rig?.close();
  await proxy?.close();
});

describe('in-doubt changes', () => {
  it('an individual Insert whose answer is lost is found by its key, not inserted twice', async () => {
    lose.add('/individual/insert');
    const p = newcomer();
    const r = await pushIndividuals(rig.intake, [p]);
    if (!r.ok) throw new Error('refused');
    const [s] = await rig.settled([r.accepted[0]!.id]);
    expect(s).toMatchObject({ status: 'applied', attempts: 2 });
    expect(proxy.seen.filter((x) => x.outcome === 'lost')).toHaveLength(1);
    const inserts = proxy.seen.filter((x) => x.url.pathname.toLowerCase().endsWith('/individual/insert'));
    expect(inserts).toHaveLength(1);
    const mine = (rig.sandbox.data.truth('individuals') as Individual[]).filter((i) => i.EmployeeNumber === p.EmployeeNumber);
    expect(mine).toHaveLength(1);
    expect(s!.serviceId).toBe(mine[0]!.ServiceId);
  });

  it("a credential Insert whose answer is lost is found in the holder's list, not inserted twice", async () => {
    const holder = (rig.sandbox.data.truth('individuals') as Individual[]).find((i) => i.EmployeeNumber && i.Status === 'Active')!;
    const cert = (rig.sandbox.data.truth('certifications') as { CertificationId: number }[])[1]!;
    lose.add('/individualcertification/insert');
    const before = proxy.seen.length;
    const r = await pushCertifications(rig.intake, [{ ServiceId: holder.ServiceId, CertificationId: cert.CertificationId, CertificationNumber: 'LOST-1' }]);
    if (!r.ok) throw new Error('refused');
    const [s] = await rig.settled([r.accepted[0]!.id]);
    expect(s).toMatchObject({ status: 'applied', attempts: 2 });
    const inserts = proxy.seen.slice(before).filter((x) => x.url.pathname.toLowerCase().endsWith('/individualcertification/insert'));
    expect(inserts).toHaveLength(1);
    const list = rig.sandbox.data.truth('individualCertifications', { ServiceId: holder.ServiceId }) as IndividualCertification[];
    const mine = list.filter((c) => c.CertificationNumber === 'LOST-1');
    expect(mine).toHaveLength(1);
    expect(s!.individualCertificationId).toBe(mine[0]!.IndividualCertificationId);
  });
});
