import { parseArgs } from 'node:util';
import { loadConfig } from '../config.ts';
import { log } from '../log.ts';
import { knownCompanies, openPushIntake } from '../push/index.ts';
import { listModels, ModelError, type PushModel } from '../push/models.ts';
import { previewModel, type ModelRunResult } from '../push/model-run.ts';
import { addPushModel, pausePushModel, removePushModel, runPushModel } from '../push/operator.ts';
import { cliActor } from '../warehouse/audit.ts';
import { UsageError } from './usage-error.ts';

const USAGE = `usage:
  wfsync push model add NAME --kind individuals|certifications --sql "SELECT ..." --key FIELD
                             [--company K] [--cron '*/15 * * * *'] [--max-changes 100]
  wfsync push model list [--json]          the models, their cron and whether paused
  wfsync push model preview NAME           what a run would queue and refuse now (nothing stored or sent)
  wfsync push model run NAME               diff the model against the warehouse and queue what differs
  wfsync push model pause|resume NAME      stop or restart its cron
  wfsync push model remove NAME

The query's columns are named by the service's fields (FirstName, or first_name as the warehouse names it);
--key is EmployeeNumber, UniqueNumber or ServiceId for individuals, IndividualCertificationId for credentials.
`;

function modelLine(m: PushModel): string {
  return [
    m.name.padEnd(20),
    m.company.padEnd(12),
    m.kind.padEnd(15),
    `key ${m.keyField}`.padEnd(30),
    (m.cron ?? 'by hand').padEnd(16),
    `cap ${m.maxChanges}`.padEnd(10),
    m.paused ? 'paused' : '',
  ]
    .join(' ')
    .trimEnd();
}

/** One line a person reads first, then the run as JSON. */
function summary(r: ModelRunResult, verb: string): string {
  const counts = `${r.rowsRead} rows read, ${r.unchanged} unchanged, ${r.changed} changed, ${verb === 'preview' ? 'would queue' : 'queued'} ${verb === 'preview' ? r.changed - r.refused : r.queued}, refused ${r.refused}`;
  return r.error ? `${r.error}${r.detail ? `: ${r.detail}` : ''}` : `model ${r.model}: ${counts}`;
}

export async function runPushModelCommand(args: string[]): Promise<number> {
  const { values, positionals } = parseArgs({
    args,
    options: {
      help: { type: 'boolean', short: 'h' },
      json: { type: 'boolean' },
      kind: { type: 'string' },
      sql: { type: 'string' },
      key: { type: 'string' },
      company: { type: 'string' },
      cron: { type: 'string' },
      'max-changes': { type: 'string' },
    },
    allowPositionals: true,
    strict: true,
  });
  const [verb, name] = positionals;
  if (values.help || !verb) {
    process.stdout.write(USAGE);
    return values.help ? 0 : 2;
  }
  if (!['add', 'list', 'preview', 'run', 'pause', 'resume', 'remove'].includes(verb))
    throw new UsageError(`push model: unknown subcommand "${verb}"\n${USAGE}`);
  if (verb !== 'list' && !name) throw new UsageError(`push model ${verb}: name the model`);
  const maxText = values['max-changes'];
  if (maxText !== undefined && !/^\d{1,7}$/.test(maxText))
    throw new UsageError('push model add: --max-changes must be a whole number');
  const config = loadConfig();
  const ctx = await openPushIntake(config, log);
  const wh = ctx.warehouse;
  try {
    if (verb === 'add') {
      if (!values.kind || !values.sql || !values.key)
        throw new UsageError('push model add: --kind, --sql and --key are required');
      const companies = (await knownCompanies(ctx)).map((c) => c.key);
      const company = values.company ?? (companies.length === 1 ? companies[0]! : undefined);
      if (!company)
        throw new UsageError(
          `push model add: --company is required: several companies are configured (${companies.join(', ')})`,
        );
      const m = await addPushModel(
        ctx,
        cliActor(),
        {
          name: name!,
          company,
          kind: values.kind,
          query: values.sql,
          keyField: values.key,
          cron: values.cron,
          maxChanges: maxText ? Number(maxText) : undefined,
        },
        companies,
      );
      process.stdout.write(`${modelLine(m)}\n`);
      return 0;
    }
    if (verb === 'list') {
      const models = await listModels(wh);
      process.stdout.write(
        values.json
          ? `${JSON.stringify(models, null, 2)}\n`
          : models.map(modelLine).join('\n') + (models.length ? '\n' : 'no models\n'),
      );
      return 0;
    }
    if (verb === 'preview' || verb === 'run') {
      const result = verb === 'run' ? await runPushModel(ctx, cliActor(), name!) : await previewModel(ctx, name!);
      process.stderr.write(`${summary(result, verb)}\n`);
      process.stdout.write(`${JSON.stringify(result, null, 2)}\n`);
      return result.outcome === 'ok' ? 0 : 1;
    }
    if (verb === 'remove') await removePushModel(ctx, cliActor(), name!);
    else process.stdout.write(`${modelLine(await pausePushModel(ctx, cliActor(), name!, verb === 'pause'))}\n`);
    return 0;
  } catch (err) {
    if (!(err instanceof ModelError)) throw err;
    process.stderr.write(`${err.message}${err.detail ? `: ${err.detail}` : ''}\n`);
    return 1;
  } finally {
    await ctx.close();
  }
}
