import { describe, expect, it } from 'vitest';
import { fingerprintPage } from '../../../src/warehouse/fingerprint.ts';
import { mapPage } from '../../../src/warehouse/page-map.ts';
import { applyPolicy } from '../../../src/warehouse/personal-data/apply.ts';
import { personalHmac, wrappedContentHash } from '../../../src/warehouse/personal-data/hmac.ts';
import { heldTag, holdRaw } from '../../../src/warehouse/personal-data/hold.ts';
import type { CompanyPolicy } from '../../../src/warehouse/personal-data/policy.ts';
import type { FieldClass } from '../../../src/warehouse/tables/personal-data.ts';
import { parsed, targetOf } from '../fixtures.ts';

const hmac = personalHmac('hold-test-secret');

const holding = (classes: [string, FieldClass][] = []): CompanyPolicy => ({
  companyKey: 'a',
  version: '1:0',
  actions: new Map(),
  suppressed: new Set(),
  classes: new Map(classes),
  hold: true,
  hmac,
});

/** A form response whose record and first answer carry fields no column maps. */
function mappedResponse() {
  const base = parsed('formResponses') as { Answers: Record<string, unknown>[] };
  const item = {
    ...base,
    BadgeNumber: 'B-00000001',
    Shoe: { Size: 42 },
    Answers: base.Answers.map((a, i) => (i === 0 ? { ...a, Comment: 'said so' } : a)),
  };
  const page = mapPage(targetOf('formResponses'), [item], { companyKey: 'a', extras: { FormId: 12 } });
  fingerprintPage(page);
  return page;
}

describe('hold on the row path', () => {
  it("stores no value of an unclassified field, the record's own or a list element's, and marks the content hash", () => {
    const page = mappedResponse();
    const [m] = page.mapped;
    const clear = m!.row._hash as string;
    applyPolicy(page, [], holding([['Shoe', 'not-personal']]));
    expect(m!.row._extra).toEqual({ Shoe: { Size: 42 } });
    expect(m!.children[0]!.map((r) => r._extra)).toEqual(m!.children[0]!.map(() => null));
    expect(m!.row._hash).toBe(`${wrappedContentHash(hmac, clear)}~${heldTag(['BadgeNumber', 'Answers.Comment'])}`);
  });

  it('marks the hash by which fields were held, so classifying one has the record written again', () => {
    const before = mappedResponse();
    applyPolicy(before, [], holding());
    const after = mappedResponse();
    applyPolicy(after, [], holding([['BadgeNumber', 'not-personal']]));
    expect(after.mapped[0]!.row._extra).toEqual({ BadgeNumber: 'B-00000001' });
    expect(after.mapped[0]!.row._hash).not.toBe(before.mapped[0]!.row._hash);
    const all = mappedResponse();
    const clear = all.mapped[0]!.row._hash;
    applyPolicy(
      all,
      [],
      holding([
        ['BadgeNumber', 'personal'],
        ['Shoe', 'patient'],
        ['Answers.Comment', 'personal'],
      ]),
    );
    expect(all.mapped[0]!.row._hash).toBe(clear);
    expect(heldTag(['b', 'a', 'b'])).toBe(heldTag(['a', 'b']));
  });

  it("keeps a refused record's payload without its unclassified fields", () => {
    const target = targetOf('formResponses');
    const raw = { ResponseId: 'x', BadgeNumber: 'B-1', SubmittedBy: { ServiceId: 1, Nickname: 'Al' } };
    expect(holdRaw(raw, target, () => false)).toEqual({ ResponseId: 'x', SubmittedBy: { ServiceId: 1 } });
    expect(holdRaw(raw, target, (p) => p === 'BadgeNumber')).toEqual({
      ResponseId: 'x',
      BadgeNumber: 'B-1',
      SubmittedBy: { ServiceId: 1 },
    });
    const element = { parent: { response_id: 1 }, Answers: { QuestionId: null, Comment: 'c', QuestionText: 'q' } };
    expect(holdRaw(element, target, () => false)).toEqual({
      parent: { response_id: 1 },
      Answers: { QuestionId: null, QuestionText: 'q' },
    });
  });
});
