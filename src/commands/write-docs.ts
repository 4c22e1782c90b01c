import { App } from '../app/index.ts';
import { loadConfig, loadDotEnv } from '../config.ts';
import { log } from '../log.ts';
import { writeDocs } from '../ops/docs.ts';
import { DBT_DOC_DIR, warehouseDbtPackage, writeDbtPackage } from '../ops/dbt.ts';

/** `npm run docs`: the README's settings table and docs/warehouse.md, from the configured (or embedded) warehouse. */
loadDotEnv();
const app = new App(loadConfig(), log);
try {
  const wh = await app.warehouse();
  await writeDocs(wh);
  writeDbtPackage(DBT_DOC_DIR, await warehouseDbtPackage(wh, { ...app.schedule, cronOverrides: {}, timezone: 'UTC' }), {
    replace: true,
  });
  process.stderr.write('wrote README.md (settings), docs/warehouse.md and docs/dbt/\n');
} finally {
  await app.stop();
}
