import type { Warehouse } from '../../src/warehouse/connection.ts';
import { tableInfo, type Row } from '../../src/warehouse/catalog.ts';
import type { Target } from '../../src/warehouse/targets.ts';

/** Rows of a target's table (or of a table by name) for one company, by key. */
export async function readRows(wh: Warehouse, target: Target | string, companyKey: string): Promise<Row[]> {
  const table = tableInfo(typeof target === 'string' ? target : target.table);
  const key = typeof target === 'string' ? table.primaryKey : ['company_key', ...target.key];
  return wh.sql.unsafe(
    `select * from "${wh.schema}"."${table.name}" where company_key = $1 order by ${key.map((k) => `"${k}"`).join(', ')}`,
    [companyKey],
  ) as unknown as Promise<Row[]>;
}
