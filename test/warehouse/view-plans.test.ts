import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { runStreams, selectStreams } from '../../src/sync/runner.ts';
import { syncedWarehouse, type SyncedWarehouse } from '../support/synced-warehouse.ts';

/**
 * Every analyst view's plan, on a warehouse synced at `small` with a second version of many credentials and
 * individuals, joins the history tables set-wise: no nested loop runs a scan of a history table once per outer
 * row (v_shifts_without_current_credential did, and never answered at `medium`).
 */

interface PlanNode {
  'Node Type': string;
  'Relation Name'?: string;
  Plans?: PlanNode[];
}

let w: SyncedWarehouse;

beforeAll(async () => {
  w = await syncedWarehouse({ size: 'small' });
  w.sandbox.data.advance(24 * 14);
  const again = await runStreams(
    w.sync.ctx,
    selectStreams(['individuals', 'individual-certifications', 'shift-assignments']),
  );
  expect(again.failed).toBe(0);
  await w.sync.warehouse.sql.unsafe('analyze');
}, 180_000);

afterAll(async () => {
  await w?.close();
});

const relationsUnder = (n: PlanNode): string[] => [
  ...(n['Relation Name'] ? [n['Relation Name']] : []),
  ...(n.Plans ?? []).flatMap(relationsUnder),
];

/** Each nested loop whose inner side scans a history table, as "outer → history table". */
function loopsOverHistory(n: PlanNode): string[] {
  const own =
    n['Node Type'] === 'Nested Loop' && n.Plans?.[1]
      ? relationsUnder(n.Plans[1])
          .filter((r) => r.endsWith('_history'))
          .map((r) => `${relationsUnder(n.Plans![0]!).join('+')} → ${r}`)
      : [];
  return [...own, ...(n.Plans ?? []).flatMap(loopsOverHistory)];
}

async function planOf(query: string): Promise<PlanNode> {
  const [row] = await w.sync.warehouse.sql.unsafe(`explain (format json) ${query}`);
  return (row!['QUERY PLAN'] as { Plan: PlanNode }[])[0]!.Plan;
}

describe('analyst view plans', () => {
  it('has history to judge against: credentials with more than one version', async () => {
    const [r] = await w.sync.warehouse.sql`
      select count(*)::int as n from (select 1 from workforce.individual_certifications_history
      group by company_key, individual_certification_id having count(*) > 1) x`;
    expect(r!.n).toBeGreaterThan(0);
  });

  it('finds a nested loop over the history when a query has one', async () => {
    const plan = await planOf(`select count(*) from workforce.shift_assignments a left join lateral (
      select h.expiration_date from workforce.individual_certifications_history h
      where h.service_id = a.assignee_service_id and h.company_key = a.company_key order by h.valid_from desc limit 1) c on true`);
    expect(loopsOverHistory(plan)).not.toEqual([]);
  });

  it('runs no nested loop over a history table in any v_* view', async () => {
    const views = await w.sync.warehouse.sql<{ name: string }[]>`
      select viewname as name from pg_views where schemaname = 'workforce' and viewname like 'v\\_%' order by 1`;
    expect(views.map((v) => v.name)).toContain('v_shifts_without_current_credential');
    const found: Record<string, string[]> = {};
    for (const { name } of views) {
      const loops = [
        ...loopsOverHistory(await planOf(`select count(*) from workforce.${name}`)),
        ...loopsOverHistory(await planOf(`select * from workforce.${name} limit 100`)),
      ];
      if (loops.length > 0) found[name] = loops;
    }
    expect(found).toEqual({});
  });
});
