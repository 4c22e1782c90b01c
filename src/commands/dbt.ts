import { parseArgs } from 'node:util';
import { App } from '../app/index.ts';
import { loadConfig } from '../config.ts';
import { log } from '../log.ts';
import { warehouseDbtPackage, writeDbtPackage } from '../ops/dbt.ts';

/** `wfsync dbt --out DIR`: writes a dbt source package for the configured warehouse. */
export async function runDbtCommand(args: string[]): Promise<number> {
  const { values } = parseArgs({
    args,
    options: { help: { type: 'boolean', short: 'h' }, out: { type: 'string' } },
    strict: true,
  });
  if (values.help || !values.out) {
    process.stdout.write(
      'usage: wfsync dbt --out DIR\n\nWrites a dbt package into DIR: dbt_project.yml, the workforce source (every data table and view, with\ndescriptions, key tests and freshness from the job schedules) and a staging model per table.\n',
    );
    return values.help ? 0 : 2;
  }
  const app = new App(loadConfig(), log);
  try {
    const files = await warehouseDbtPackage(await app.warehouse(), app.schedule);
    writeDbtPackage(values.out, files);
    process.stderr.write(`wrote a dbt package of ${files.size} files into ${values.out}\n`);
  } finally {
    await app.stop();
  }
  return 0;
}
