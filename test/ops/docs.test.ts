import { readFileSync } from 'node:fs';
import { afterAll, describe, expect, it } from 'vitest';
import { Env } from '../../src/config.ts';
import { README, WAREHOUSE_DOC, readmeWithSettings, warehouseDictionary } from '../../src/ops/docs.ts';
import { SETTING_DOCS } from '../../src/settings-docs.ts';
import { openWarehouse, type Warehouse } from '../../src/warehouse/connection.ts';
import { freshDatabase } from '../support/db.ts';

let wh: Warehouse | undefined;
afterAll(() => wh?.close());

describe('generated documents (npm run docs)', () => {
  it('every setting the config schema reads has one entry in the settings docs', () => {
    const documented = SETTING_DOCS.flatMap((s) => s.names).filter((n) => n !== 'WFS_CRON_<JOB>');
    expect([...documented].sort()).toEqual(Object.keys(Env.shape).sort());
    expect(new Set(documented).size).toBe(documented.length);
  });

  it("README's settings table is the generated one", () => {
    const readme = readFileSync(README, 'utf8');
    expect(readme, 'README.md drifted from src/settings-docs.ts: run npm run docs').toBe(readmeWithSettings(readme));
  });

  it('the README stays a guide for users, at most 600 lines, and its links into docs/ name headings that exist', () => {
    const readme = readFileSync(README, 'utf8');
    expect(
      readme.split('\n').length - 1,
      'README.md is for users: move methods and figures to docs/',
    ).toBeLessThanOrEqual(600);
    for (const [, file, anchor] of readme.matchAll(/\]\((docs\/[\w-]+\.md)#([\w-]+)\)/g)) {
      const headings = readFileSync(new URL(`../../${file}`, import.meta.url), 'utf8').match(/^#+ .*$/gm) ?? [];
      const slugs = headings.map((h) =>
        h
          .replace(/^#+ /, '')
          .toLowerCase()
          .replace(/[^\w\s-]/g, '')
          .trim()
          .replace(/\s+/g, '-'),
      );
      expect(slugs, `${file}#${anchor}`).toContain(anchor);
    }
  });

  it('docs/warehouse.md is the data dictionary of a migrated warehouse', async () => {
    wh = await openWarehouse({ databaseUrl: await freshDatabase({ migrated: true }) });
    await wh.migrate();
    const generated = await warehouseDictionary(wh);
    expect(generated).toMatch(/^## shift_assignments$/m);
    expect(generated).toMatch(/^## v_credentials_expiring$/m);
    expect(generated).toMatch(/^\| `company_key` \| text \| Key of the company account/m);
    expect(
      readFileSync(WAREHOUSE_DOC, 'utf8'),
      'docs/warehouse.md drifted from the warehouse COMMENTs: run npm run docs',
    ).toBe(generated);
  });
});
