import { App } from '../app/index.ts';
import { loadConfig, loadDotEnv } from '../config.ts';
import { log } from '../log.ts';
import { writeDocs } from '../ops/docs.ts';

/** `npm run docs`: the README's settings table and docs/warehouse.md, from the configured (or embedded) warehouse. */
loadDotEnv();
const app = new App(loadConfig(), log);
try {
  await writeDocs(await app.warehouse());
  process.stderr.write('wrote README.md (settings) and docs/warehouse.md\n');
} finally {
  await app.stop();
}
