import { describe, expect, it } from 'vitest';
import { endpoints } from '../../src/resources/index.ts';
import { parseItems } from '../../src/source/paging.ts';
import { mapItem } from '../../src/warehouse/fingerprint.ts';
import { parsed, raw, targetOf, type ResourceName } from './fixtures.ts';

/**
 * A stored row's `_hash` decides whether the next read of its record changed anything. Were the fingerprint of
 * unchanged content to come out differently in a new version, the first sync after an upgrade would rewrite
 * every row and open a history version for each that says nothing new. These are the fingerprints earlier
 * versions stored for the fixture records: any change to mapping or hashing must keep them.
 */
describe('content fingerprints', () => {
  it('stay those earlier versions stored, for a record of every resource', () => {
    const hashes = Object.fromEntries(
      (Object.keys(raw) as ResourceName[]).map((name) => [
        name,
        mapItem(targetOf(name), 'acme', parsed(name)).row._hash,
      ]),
    );
    expect(hashes).toMatchInlineSnapshot(`
      {
        "assignmentChanges": "c711a4ce49fa3683b675cd90e2b8619c",
        "certifications": "5a99ebac7e22cf92c52e090686da6b84",
        "departments": "570295a2ed677ba7f51f4ffad864b193",
        "formAudit": "2a9e3fdf3d079f37871a9f9d00a8530b",
        "formResponses": "d5fb0c9ea0b58acf4a6bddb021b64538",
        "individualCertifications": "ca43814f3b0f11389c55520605050a65",
        "individualCourses": "73a2a177dd894440b2cb132e5da2ea8c",
        "individuals": "f17fb5e24d5b3a1e22e5b7c853c8d93e",
        "jobTitles": "2e7e77999c016b5176f7d4bb64b2a07b",
        "locales": "3d8dc8adc28339dbf594bfb233f81aaa",
        "pendingCertifications": "cde1ac3afa3adaf4db5fef3204baba43",
        "requiredCertificationStatus": "a9a7692bf88d1f5548cf4e6da5e0fb02",
        "runLogFormResponses": "7b2f810824d5594bb01e5dc92d3295ff",
        "runLogForms": "d6f2183ac37b518189e4baaa9cb1c3b2",
        "schedules": "915d9d8b63575e2e0a06f0e250e84025",
        "shiftAssignments": "fcd8c70bc0d11f7e7e6f9f24e31625af",
        "supervisors": "39c142adedb452753e1ff68ee8a64be1",
        "timeOffRequests": "1c0115b8623d5f40e1225f87e1c1e8d2",
        "workShifts": "690fd26df5985597dbb0ee750c27e5b4",
        "workStatuses": "3220c503e8def8a972c058c83b2c4de2",
      }
    `);
  });

  it('of a record used as parsed are those of the copy zod makes, whatever order its fields came in', () => {
    const employee = {
      ServiceId: 9001,
      FirstName: 'Dana',
      LastName: 'Reyes',
      UniqueIdentifier: 'U-100',
      EmployeeNumber: 'E-100',
      Badge: 'blue',
    };
    const reviewer = { ServiceId: 8000, FirstName: 'Lee', LastName: 'Kim', Desk: 4 };
    const { Employee: _e, ReviewedBy: _r, ...rest } = raw.timeOffRequests;
    const inOrder = { Employee: employee, ...rest, ReviewedBy: reviewer, Note: 'n' };
    const reordered = { ReviewedBy: reviewer, ...rest, Employee: employee, Note: 'n' };
    const schema = endpoints.timeOffRequests.item;
    const hash = (item: object) =>
      mapItem(targetOf('timeOffRequests'), 'acme', item as Record<string, unknown>).row._hash;
    for (const record of [inOrder, reordered]) {
      const { items } = parseItems(schema, [JSON.parse(JSON.stringify(record))]);
      expect(hash(items[0]!)).toBe(hash(schema.parse(record)));
    }
  });
});
