import { execFile } from 'node:child_process';
import { mkdtempSync, rmSync, symlinkSync, writeFileSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { fileURLToPath, pathToFileURL } from 'node:url';
import { promisify } from 'node:util';
import { serve, type ServerType } from '@hono/node-server';
import openapiTS, { astToString, type OpenAPI3 } from 'openapi-typescript';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { createPushApi } from '../../src/push/http.ts';
import type { Individual } from '../../src/source/schemas/index.ts';
import { newcomer, openRig, type PushRig } from './support.ts';

/**
 * The push API's contract as an HR system meets it: /push/openapi.json passes Redocly's recommended rules, and a
 * client generated from it with openapi-typescript compiles under tsc and pushes a change the service applies.
 */

const run = promisify(execFile);
const NODE_MODULES = fileURLToPath(new URL('../../node_modules', import.meta.url));
const REDOCLY = join(NODE_MODULES, '@redocly/cli/bin/cli.js');
const TSC = join(NODE_MODULES, 'typescript/bin/tsc');
const TOKEN = 'openapi-token-0123456789abcdef';

/**
 * The HR system's side, compiled against the generated types. The type checks fail to compile when a field or
 * an operation of the document loses its type (a bare `nullable` types IsEmployee `unknown`; no operationId, no
 * `operations` entry).
 */
const CLIENT = `
import createClient from 'openapi-fetch';
import type { operations, paths } from './push-api.js';

type Body = operations['pushIndividuals']['requestBody']['content']['application/json'];
export type IndividualChange = Exclude<Body, unknown[]>;
type Is<T extends true> = T;
export type FlagsTyped = Is<IndividualChange['IsEmployee'] extends 0 | 1 | null | undefined ? true : false>;
export type StatusTyped = Is<operations['getChange']['responses'][200]['content']['application/json']['serviceId'] extends number | null ? true : false>;
// @ts-expect-error 2 is not a flag
export const notAFlag: IndividualChange = { IsEmployee: 2 };

export function pushClient(baseUrl: string, token: string) {
  const client = createClient<paths>({ baseUrl, headers: { authorization: \`Bearer \${token}\` } });
  return {
    async pushIndividual(change: IndividualChange) {
      const { data, error, response } = await client.POST('/push/individuals', { body: change });
      if (!data) throw new Error(\`push refused with \${response.status}: \${JSON.stringify(error)}\`);
      return data;
    },
    async change(id: number) {
      const { data, error, response } = await client.GET('/push/{id}', { params: { path: { id: String(id) } } });
      if (!data) throw new Error(\`change \${id}: \${response.status} \${JSON.stringify(error)}\`);
      return data;
    },
  };
}
`;

const TSCONFIG = {
  compilerOptions: {
    target: 'ES2022',
    module: 'NodeNext',
    moduleResolution: 'NodeNext',
    lib: ['ES2023', 'DOM'],
    types: [],
    strict: true,
    skipLibCheck: true,
  },
  files: ['client.ts'],
};

interface PushClient {
  pushIndividual(change: Record<string, unknown>): Promise<{ changeId: string; id: number; status: string }[]>;
  change(
    id: number,
  ): Promise<{ status: string; changeId: string; serviceId: number | null; individualId: number | null }>;
}

let rig: PushRig;
let server: ServerType;
let base: string;
let dir: string;

beforeAll(async () => {
  rig = await openRig();
  const app = createPushApi({ intake: rig.intake, token: TOKEN });
  await new Promise<void>((resolve) => {
    server = serve({ fetch: app.fetch, port: 0, hostname: '127.0.0.1' }, (info) => {
      base = `http://127.0.0.1:${info.port}`;
      resolve();
    });
  });
  dir = mkdtempSync(join(tmpdir(), 'wfsync-openapi-'));
  // The client resolves openapi-fetch (and tsc its types) as an installed package would.
  symlinkSync(NODE_MODULES, join(dir, 'node_modules'));
});
afterAll(async () => {
  await new Promise<void>((r) => server?.close(() => r()));
  await rig?.close();
  if (dir) rmSync(dir, { recursive: true, force: true });
});

async function served(): Promise<OpenAPI3> {
  const res = await fetch(`${base}/push/openapi.json`);
  expect(res.status).toBe(200);
  return (await res.json()) as OpenAPI3;
}

/** Redocly's recommended rules over the document; one line per problem. */
async function lint(doc: OpenAPI3): Promise<string[]> {
  const file = join(dir, 'openapi.json');
  writeFileSync(file, JSON.stringify(doc));
  const env = { ...process.env, REDOCLY_TELEMETRY: 'off', REDOCLY_SUPPRESS_NOTIFICATIONS: 'true' };
  const out = await run(process.execPath, [REDOCLY, 'lint', file, '--extends=recommended', '--format=json'], {
    cwd: dir,
    env,
  }).catch((e: { stdout?: string; stderr?: string }) => {
    if (!e.stdout) throw new Error(`redocly lint did not report: ${e.stderr}`);
    return { stdout: e.stdout };
  });
  const report = JSON.parse(out.stdout) as {
    problems: { ruleId: string; severity: string; message: string; location: { pointer: string }[] }[];
  };
  return report.problems.map((p) => `${p.severity} ${p.ruleId} at ${p.location[0]?.pointer}: ${p.message}`);
}

/** Generates the types, writes the client beside them and compiles both with tsc; the compiled client's module. */
async function compiledClient(doc: OpenAPI3): Promise<{ pushClient(baseUrl: string, token: string): PushClient }> {
  writeFileSync(join(dir, 'push-api.ts'), astToString(await openapiTS(doc)));
  writeFileSync(join(dir, 'client.ts'), CLIENT);
  writeFileSync(join(dir, 'package.json'), JSON.stringify({ type: 'module' }));
  writeFileSync(join(dir, 'tsconfig.json'), JSON.stringify(TSCONFIG));
  const compiled = await run(process.execPath, [TSC, '-p', dir], { cwd: dir }).then(
    () => '',
    (e: { stdout?: string; message: string }) => e.stdout || e.message,
  );
  expect(compiled, 'tsc output').toBe('');
  return import(pathToFileURL(join(dir, 'client.js')).href);
}

describe('the push API contract', () => {
  it('passes Redocly lint with the recommended rules, with no error or warning', async () => {
    expect(await lint(await served())).toEqual([]);
  });

  it('names every operation, so generated clients name their methods after them', async () => {
    const doc = await served();
    const ids = Object.values(doc.paths ?? {}).flatMap((item) =>
      Object.values(item as Record<string, { operationId?: string }>).map((op) => op.operationId),
    );
    expect(ids.sort()).toEqual([
      'addModel',
      'getChange',
      'listChanges',
      'listModelRuns',
      'listModels',
      'pauseModel',
      'previewModel',
      'pushCertifications',
      'pushIndividuals',
      'pushVerifications',
      'removeModel',
      'resumeModel',
      'runModel',
    ]);
  });

  it('a client generated from it compiles with tsc and pushes an individual that the service applies', async () => {
    const doc = await served();
    const { pushClient } = await compiledClient(doc);
    // The document's server is relative to where it is served.
    const client = pushClient(new URL(doc.servers![0]!.url, `${base}/push/openapi.json`).href, TOKEN);
    const person = newcomer({ changeId: 'openapi-1', IsEmployee: 1 });
    const [accepted] = await client.pushIndividual(person);
    expect(accepted).toMatchObject({ changeId: 'openapi-1', status: 'queued' });
    await rig.settled([accepted!.id]);
    const change = await client.change(accepted!.id);
    const truth = (rig.sandbox.data.truth('individuals') as Individual[]).find(
      (i) => i.EmployeeNumber === person.EmployeeNumber,
    );
    expect(truth).toMatchObject({ FirstName: person.FirstName, LastName: person.LastName, IsEmployee: 1 });
    expect(change).toMatchObject({
      status: 'applied',
      changeId: 'openapi-1',
      serviceId: truth!.ServiceId,
      individualId: truth!.IndividualId,
    });
  });
});
