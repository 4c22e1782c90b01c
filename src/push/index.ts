import type { Config } from '../config.ts';
import type { Logger } from '../log.ts';
import type { Warehouse } from '../warehouse/connection.ts';
import { listCompanies } from '../warehouse/company-records.ts';
import { openMigratedWarehouse } from '../warehouse/configured.ts';
import { personalCatalog } from '../resources/index.ts';
import type { IntakeContext } from './intake.ts';
import { createSealer, secretKeyOf } from '../warehouse/secret.ts';
import { ModelScheduler, type ModelSchedulerOptions } from './model-schedule.ts';
import { warehousePolicy } from './warehouse-policy.ts';

export {
  pushIndividuals,
  pushCertifications,
  pushVerifications,
  intake,
  knownCompanies,
  parseBody,
  type IntakeContext,
  type IntakeResult,
  type RefusedItem,
} from './intake.ts';
export { previewPush, type Preview, type PreviewedChange } from './preview.ts';
export { KEEP_EVERYTHING, type FieldPolicy, type FieldTreatment } from './field-policy.ts';
export { getChange, listChanges, retryChange, type PushStatus, type ListOptions } from './outbox.ts';
export { createPushRunner, type PushRunner } from './runner.ts';
export { PUSH_QUEUE } from './dispatch.ts';
export { ModelScheduler, type ModelSchedulerOptions } from './model-schedule.ts';
export {
  addModel,
  listModels,
  getModel,
  setModelPaused,
  removeModel,
  ModelError,
  type PushModel,
  type NewModel,
} from './models.ts';
export { previewModel, runModel, listModelRuns, type ModelRunResult, type ModelRunRow } from './model-run.ts';
export {
  addPushModel,
  pausePushModel,
  pushChanges,
  removePushModel,
  retryPush,
  runPushModel,
} from './operator.ts';
export type { PushRunnerOptions } from './options.ts';
export { createPushApi, type PushApiOptions } from './http.ts';
export { createSealer, secretKeyOf, type Sealer } from '../warehouse/secret.ts';

/** Runs the push models on their crons. */
export const createModelScheduler = (o: ModelSchedulerOptions) => new ModelScheduler(o);

/** The intake of a configured process: its warehouse (given, or opened and migrated), the sealer and the companies. */
export function intakeContext(config: Config, warehouse: Warehouse): IntakeContext {
  return {
    warehouse,
    sealer: createSealer(secretKeyOf(config)),
    companies: config.companies.map((c) => ({ key: c.key, singleSignOn: c.singleSignOn })),
    added: async () => (await listCompanies(warehouse)).map((c) => ({ key: c.key })),
    policy: warehousePolicy(warehouse),
  };
}

/** Opens the configured warehouse for the library and the CLI; one line naming it when it cannot be reached. */
export async function openPushIntake(
  config: Config,
  logger: Logger,
): Promise<IntakeContext & { close(): Promise<void> }> {
  const wh = await openMigratedWarehouse(config, logger, personalCatalog);
  return { ...intakeContext(config, wh), close: () => wh.close() };
}
