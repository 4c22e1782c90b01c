import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import type { Individual, IndividualCertification } from '../../src/source/schemas/index.ts';
import { pushCertifications, pushIndividuals, pushVerifications } from '../../src/push/intake.ts';
import { openRig, newcomer, type PushRig } from './support.ts';

/** Each kind pushed through intake and the runner to the sandbox over HTTP, and what the service and warehouse show after. */

let rig: PushRig;
beforeAll(async () => {
  rig = await openRig();
});
afterAll(async () => {
  await rig?.close();
});

const accepted = (r: Awaited<ReturnType<typeof pushIndividuals>>) => {
  if (!r.ok) throw new Error(`refused: ${JSON.stringify(r.refused)}`);
  return r.accepted;
};

function individualByEmployeeNumber(en: string): Individual | undefined {
  return (rig.sandbox.data.truth('individuals') as Individual[]).find((i) => i.EmployeeNumber === en);
}

describe('push to the sandbox', () => {
  it('inserts an individual, then updates it by EmployeeNumber; both visible at the service and in the warehouse', async () => {
    const person = newcomer({ SSN: '123456789' });
    const [ins] = accepted(await pushIndividuals(rig.intake, [{ ...person, changeId: 'ins-1' }]));
    const [done] = await rig.settled([ins!.id]);
    expect(done).toMatchObject({ status: 'applied', changeId: 'ins-1' });
    const created = individualByEmployeeNumber(String(person.EmployeeNumber))!;
    expect(created).toBeDefined();
    expect(done!.serviceId).toBe(created.ServiceId);
    const [upd] = accepted(
      await pushIndividuals(rig.intake, [
        {
          EmployeeNumber: person.EmployeeNumber,
          FirstName: 'Adeline',
          LastName: person.LastName,
          Status: 'LOA',
          PrimaryEmailAddress: person.PrimaryEmailAddress,
          LogonId: person.LogonId,
        },
      ]),
    );
    await rig.settled([upd!.id]);
    const after = individualByEmployeeNumber(String(person.EmployeeNumber))!;
    expect(after).toMatchObject({
      ServiceId: created.ServiceId,
      FirstName: 'Adeline',
      Status: 'LOA',
      PrimaryEmailAddress: person.PrimaryEmailAddress,
    });
    const rows = await rig.warehouse.sql.unsafe(
      `select first_name, status from "${rig.warehouse.schema}".individuals where service_id = $1`,
      [created.ServiceId],
    );
    expect(rows).toEqual([{ first_name: 'Adeline', status: 'LOA' }]);
    const stored = await rig.warehouse.sql.unsafe(
      `select sealed from "${rig.warehouse.schema}".push_outbox where id = $1`,
      [ins!.id],
    );
    expect(stored[0]!.sealed).toBeNull();
  });

  it('keeps IsSupervisor when an update leaves it out, and updates with ServiceId only the fields sent', async () => {
    const sup = (rig.sandbox.data.truth('individuals') as Individual[]).find(
      (i) => i.IsSupervisor === 1 && i.PrimaryEmailAddress && i.Status,
    )!;
    const [c] = accepted(await pushIndividuals(rig.intake, [{ ServiceId: sup.ServiceId, MiddleName: 'Q' }]));
    const [s] = await rig.settled([c!.id]);
    expect(s!.status).toBe('applied');
    const after = (rig.sandbox.data.truth('individuals') as Individual[]).find((i) => i.ServiceId === sup.ServiceId)!;
    expect(after).toMatchObject({
      IsSupervisor: 1,
      MiddleName: 'Q',
      LastName: sup.LastName,
      EmployeeNumber: sup.EmployeeNumber,
    });
  });

  it("shows the service's own refusal (a LogonId already used) on the change", async () => {
    const taken = (rig.sandbox.data.truth('individuals') as Individual[]).find((i) => i.LogonId)!;
    const [c] = accepted(await pushIndividuals(rig.intake, [newcomer({ LogonId: taken.LogonId })]));
    const [s] = await rig.settled([c!.id]);
    expect(s).toMatchObject({ status: 'refused' });
    expect(s!.fields).toHaveProperty('LogonId');
    expect(s!.error).toMatch(/LogonId/);
  });

  it('a changeId sent twice is one change', async () => {
    const p = newcomer({ changeId: 'same-change' });
    const [a] = accepted(await pushIndividuals(rig.intake, [p]));
    const [b] = accepted(await pushIndividuals(rig.intake, [p]));
    expect(b!.id).toBe(a!.id);
    await rig.settled([a!.id]);
    expect(
      (rig.sandbox.data.truth('individuals') as Individual[]).filter((i) => i.EmployeeNumber === p.EmployeeNumber),
    ).toHaveLength(1);
  });

  it('coalesces pending updates of one individual into one Update, applied in order (the last wins)', async () => {
    await rig.runner.stop();
    try {
      const p = newcomer();
      const ids = accepted(
        await pushIndividuals(rig.intake, [
          p,
          { ...p, FirstName: 'B' },
          { ...p, FirstName: 'C', MiddleName: 'M' },
          { ...p, FirstName: 'D' },
        ]),
      ).map((s) => s.id);
      const before = rig.sandbox.stats();
      await rig.runner.start();
      const states = await rig.settled(ids);
      expect(states.map((s) => s.status)).toEqual(['applied', 'applied', 'applied', 'applied']);
      const ind = individualByEmployeeNumber(String(p.EmployeeNumber))!;
      expect(ind).toMatchObject({ FirstName: 'D', MiddleName: 'M' });
      // One lookup and one Insert for all four changes.
      expect(rig.sandbox.stats().requests - before.requests).toBe(2);
      const coalesced = await rig.warehouse.sql.unsafe(
        `select count(*)::int as n from "${rig.warehouse.schema}".push_outbox where coalesced_into = $1`,
        [ids[3]!],
      );
      expect(coalesced[0]!.n).toBe(3);
    } finally {
      await rig.runner.start().catch(() => undefined);
    }
  });

  it('a credential for an individual whose insert is pending waits for it; then an update by its id', async () => {
    await rig.runner.stop();
    const p = newcomer();
    const cert = (rig.sandbox.data.truth('certifications') as { CertificationId: number }[])[0]!;
    // The credential is queued first by time, but names a holder whose insert is also queued.
    const [ind] = accepted(await pushIndividuals(rig.intake, [p]));
    const [cr] = accepted(
      await pushCertifications(rig.intake, [
        {
          EmployeeNumber: p.EmployeeNumber,
          CertificationId: cert.CertificationId,
          CertificationNumber: 'CN-77',
          ExpirationDate: '2030-01-31',
        },
      ]),
    );
    await rig.runner.start();
    const [si, sc] = await rig.settled([ind!.id, cr!.id]);
    expect(si!.status).toBe('applied');
    expect(sc).toMatchObject({ status: 'applied', serviceId: si!.serviceId });
    const creds = rig.sandbox.data.truth('individualCertifications', {
      ServiceId: si!.serviceId!,
    }) as IndividualCertification[];
    expect(creds.filter((c) => c.CertificationNumber === 'CN-77')).toHaveLength(1);
    const [up] = accepted(
      await pushCertifications(rig.intake, [
        { IndividualCertificationId: sc!.individualCertificationId, ExpirationDate: '2031-05-01' },
      ]),
    );
    const [su] = await rig.settled([up!.id]);
    expect(su!.status).toBe('applied');
    const row = await rig.warehouse.sql.unsafe(
      `select expiration_date::text as d from "${rig.warehouse.schema}".individual_certifications where individual_certification_id = $1`,
      [sc!.individualCertificationId],
    );
    expect(row).toEqual([{ d: '2031-05-01' }]);
  });

  it('verification results go in one batch; a refused result is isolated and the rest go through', async () => {
    await rig.runner.stop();
    const pending = rig.sandbox.data.truth('pendingCertifications') as { IndividualCertificationId: number }[];
    expect(pending.length).toBeGreaterThan(3);
    const good = pending.slice(0, 5).map((c, i) => ({
      RequestId: `rq-${i}`,
      IndividualCertificationId: String(c.IndividualCertificationId),
      IsVerified: true,
    }));
    const bad = { RequestId: 'rq-bad', IndividualCertificationId: '1', IsVerified: true };
    const ids = accepted(await pushVerifications(rig.intake, [...good.slice(0, 2), bad, ...good.slice(2)])).map(
      (s) => s.id,
    );
    await rig.runner.start();
    const states = await rig.settled(ids);
    expect(states.map((s) => s.status)).toEqual(['applied', 'applied', 'refused', 'applied', 'applied', 'applied']);
    expect(states[2]!.fields).toHaveProperty('IndividualCertificationId');
    const still = new Set(
      (rig.sandbox.data.truth('pendingCertifications') as { IndividualCertificationId: number }[]).map(
        (c) => c.IndividualCertificationId,
      ),
    );
    for (const g of good) expect(still.has(Number(g.IndividualCertificationId))).toBe(false);
  });
});
