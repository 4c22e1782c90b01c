import { pgSchema } from 'drizzle-orm/pg-core';
import { accessTables } from './tables/access.ts';
import { DEFAULTS } from '../config.ts';
import { bookkeepingTables } from './tables/bookkeeping.ts';
import { companyTables } from './tables/companies.ts';
import { courseTables } from './tables/courses.ts';
import { credentialTables } from './tables/credentials.ts';
import { fencingTables } from './tables/fencing.ts';
import { formTables } from './tables/forms.ts';
import { peopleTables } from './tables/people.ts';
import { pushModelTables, pushTables } from './tables/push.ts';
import { operatorTables } from './tables/operators.ts';
import { personalDataTables } from './tables/personal-data.ts';
import { referenceTables } from './tables/reference.ts';
import { schedulingTables } from './tables/scheduling.ts';
import { timeOffTables } from './tables/time-off.ts';

/**
 * The warehouse tables, one module per domain under ./tables. `warehouseTables(name)` builds them in any
 * schema; drizzle-kit reads the default instance through ./drizzle-kit.cts.
 */

export const DEFAULT_SCHEMA = DEFAULTS.dbSchema;

export function warehouseTables(schemaName: string) {
  const s = pgSchema(schemaName);
  return {
    ...peopleTables(s),
    ...credentialTables(s),
    ...schedulingTables(s),
    ...timeOffTables(s),
    ...courseTables(s),
    ...formTables(s),
    ...referenceTables(s),
    ...bookkeepingTables(s),
    ...pushTables(s),
    ...pushModelTables(s),
    ...fencingTables(s),
    ...companyTables(s),
    ...accessTables(s),
    ...personalDataTables(s),
    ...operatorTables(s),
  };
}

export type WarehouseTables = ReturnType<typeof warehouseTables>;
