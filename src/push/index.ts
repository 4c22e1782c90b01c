import type { Config } from '../config.ts';
import type { Logger } from '../log.ts';
import type { Warehouse } from '../warehouse/connection.ts';
import { listCompanies } from '../warehouse/companies.ts';
import { openMigratedWarehouse } from '../warehouse/configured.ts';
import type { IntakeContext } from './intake.ts';
import { createSealer, secretKeyOf } from '../warehouse/secret.ts';

export { pushIndividuals, pushCertifications, pushVerifications, intake, parseBody, type IntakeContext, type IntakeResult, type RefusedItem } from './intake.ts';
export { getChange, listChanges, retryChange, type PushStatus, type ListOptions } from './outbox.ts';
export { createPushRunner, type PushRunner } from './runner.ts';
export { PUSH_QUEUE } from './dispatch.ts';
export type { PushRunnerOptions } from './options.ts';
export { createPushApi, type PushApiOptions } from './http.ts';
export { createSealer, secretKeyOf, type Sealer } from '../warehouse/secret.ts';

/** The intake of a configured process: its warehouse (given, or opened and migrated), the sealer and the companies. */
export function intakeContext(config: Config, warehouse: Warehouse): IntakeContext {
  return {
    warehouse,
    sealer: createSealer(secretKeyOf(config)),
    companies: config.companies.map((c) => ({ key: c.key, singleSignOn: c.singleSignOn })),
    added: async () => (await listCompanies(warehouse)).map((c) => ({ key: c.key })),
  };
}

/** Opens the configured warehouse for the library and the CLI; one line naming it when it cannot be reached. */
export async function openPushIntake(config: Config, logger: Logger): Promise<IntakeContext & { close(): Promise<void> }> {
  const wh = await openMigratedWarehouse(config, logger);
  return { ...intakeContext(config, wh), close: () => wh.close() };
}
