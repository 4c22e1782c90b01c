import { OpenAPIHono, z as described } from '@hono/zod-openapi';
import type { Context, MiddlewareHandler } from 'hono';
import { bodyLimit } from 'hono/body-limit';
import { z } from 'zod';
import {
  PUSH_KINDS,
  PUSH_MODEL_KINDS,
  PUSH_MODEL_OUTCOMES,
  PUSH_STATES,
  type PushKind,
} from '../warehouse/tables/push.ts';
import { listModelRuns, previewModel, type ModelRunResult } from './model-run.ts';
import { listModels, MODEL_NAME, ModelError, type ModelErrorKind } from './models.ts';
import { addPushModel, pausePushModel, pushChanges, removePushModel, runPushModel } from './operator.ts';
import type { Actor } from '../warehouse/audit.ts';
import type { TokenScope } from '../warehouse/api-tokens.ts';
import { bearer, callerOf, mayActFor, notForCompany } from './bearer.ts';
import { MAX_CHANGES } from './bounds.ts';
import { knownCompanies, parseBody, type IntakeContext } from './intake.ts';
import { getChange, listChanges } from './outbox.ts';
import { countParam, readQuery } from './http-query.ts';
import { previewPush } from './preview.ts';
import { CertificationChange, IndividualChange, VerificationChange } from './validate.ts';

/**
 * The push API as a hono app with absolute paths under /push, for the ops server to mount:
 * POST /push/individuals|certifications|verifications, GET /push/:id, GET /push, and /push/openapi.json,
 * generated from the same zod schemas intake checks with.
 */

export interface PushApiOptions {
  intake: IntakeContext;
  /** WFS_PUSH_TOKEN, the token named `env`; named tokens (`wfsync tokens`) are looked up in the warehouse. */
  token?: string;
}

const Accepted = z.array(z.object({ changeId: z.string(), id: z.number().int(), status: z.enum(PUSH_STATES) }));
const Refused = z.object({
  error: z.string(),
  refused: z.array(
    z.object({ index: z.number().int(), changeId: z.string().optional(), fields: z.record(z.string(), z.string()) }),
  ),
});
const Problem = z.object({ error: z.string() });
// Typed per branch: a nullable union would otherwise gain a bare `nullable` member that OpenAPI 3.0 refuses.
const Value = described
  .union([described.string(), described.number(), described.boolean()])
  .nullable()
  .openapi({
    anyOf: [{ type: 'string', nullable: true }, { type: 'number' }, { type: 'boolean' }],
    description: 'The value; null where none is held',
  });
const Previewed = z.object({
  index: z.number().int(),
  changeId: z.string().optional(),
  company: z.string().optional(),
  valid: z.boolean(),
  refused: z.record(z.string(), z.string()).optional().describe('Why intake would refuse it, by field'),
  action: z.enum(['insert', 'update', 'submit']).optional(),
  record: z
    .record(z.string(), z.number().int())
    .nullable()
    .optional()
    .describe("The warehouse's record the change updates (its ids); null for an insert"),
  changed: z
    .record(z.string(), z.array(Value))
    .optional()
    .describe("Fields that would change, as [warehouse's value, pushed value]; a hashed field shows hashes"),
  unchanged: z.array(z.string()).optional().describe('Fields sent with the value the warehouse already holds'),
  notCompared: z.record(z.string(), z.string()).optional().describe('Fields that cannot be compared, and why'),
  note: z.string().optional(),
  requests: z.number().int().describe('Requests the change would cost at the service'),
});
const Preview = z.object({
  dryRun: z.boolean(),
  valid: z.number().int(),
  refused: z.number().int(),
  inserts: z.number().int(),
  updates: z.number().int(),
  noChange: z.number().int().describe('Valid updates that would change no field the warehouse holds'),
  requests: z.number().int(),
  changes: z.array(Previewed),
});
const DryRun = z.object({
  dryRun: z
    .enum(['true', 'false'], { error: 'expected true or false' })
    .optional()
    .describe('true: check and compare with the warehouse only; nothing is stored or sent'),
});
/** Change ids are bigints: past the largest exact JS integer no id can be named, nor reach Postgres. */
const ChangeId = z.object({ id: countParam(Number.MAX_SAFE_INTEGER) });
const Status = z.object({
  id: z.number().int(),
  changeId: z.string(),
  company: z.string(),
  kind: z.enum(PUSH_KINDS),
  status: z.enum(PUSH_STATES),
  attempts: z.number().int(),
  error: z.string().nullable().describe("The service's message for a refusal, or the last error."),
  fields: z.record(z.string(), z.string()).nullable(),
  individualId: z.number().int().nullable(),
  serviceId: z.number().int().nullable(),
  individualCertificationId: z.number().int().nullable(),
  createdAt: z.string(),
  updatedAt: z.string(),
  appliedAt: z.string().nullable(),
});

const KINDS: Record<string, { kind: PushKind; schema: z.ZodType; operationId: string; summary: string }> = {
  individuals: {
    kind: 'individual',
    schema: IndividualChange,
    operationId: 'pushIndividuals',
    summary: 'Insert or update individuals (upsert by EmployeeNumber, UniqueNumber or ServiceId)',
  },
  certifications: {
    kind: 'certification',
    schema: CertificationChange,
    operationId: 'pushCertifications',
    summary: 'Insert or update credentials',
  },
  verifications: {
    kind: 'verification',
    schema: VerificationChange,
    operationId: 'pushVerifications',
    summary: 'Send verification results (ValidateSubmission)',
  },
};

const json = (schema: z.ZodType, description: string) => ({ description, content: { 'application/json': { schema } } });

/** Room for MAX_CHANGES changes of well over a kilobyte each; a larger body is refused before it is read whole. */
const PUSH_MAX_BYTES = 16 * 1024 * 1024;

/** Who a request acts as: its token. */
const actorOf = (c: Context): Actor => callerOf(c).actor;

/** Pushing needs `push`; reading a change or a model `read`; changing a model `admin`. */
function scopeOf(c: Context): TokenScope {
  if (c.req.path.startsWith('/push/models')) return c.req.method === 'GET' ? 'read' : 'admin';
  return c.req.method === 'POST' ? 'push' : 'read';
}

/** The intake as a token limited to some companies sees it: the others are unknown to it. */
function intakeFor(c: Context, intake: IntakeContext): IntakeContext {
  const caller = callerOf(c);
  if (caller.companies.length === 0) return intake;
  const mine = <T extends { key: string }>(list: readonly T[]) => list.filter((x) => mayActFor(caller, x.key));
  return { ...intake, companies: mine(intake.companies), added: async () => mine((await intake.added?.()) ?? []) };
}

export function createPushApi(o: PushApiOptions): OpenAPIHono {
  const app = new OpenAPIHono();
  app.openAPIRegistry.registerComponent('securitySchemes', 'bearer', {
    type: 'http',
    scheme: 'bearer',
    description:
      'A token from `wfsync tokens create NAME --scope push|read|admin` (or WFS_PUSH_TOKEN, which has every scope). Each operation names the scope it needs in x-scope; a token made with --company acts on those companies only.',
  });
  const doc: Documented = {
    security: [{ bearer: [] }],
    common: {
      401: json(Problem, 'The bearer token is missing or wrong'),
      403: json(Problem, "The token's scopes do not include the one this operation needs, or not this company"),
    },
  };
  guardPush(app, o);
  mountIntake(app, o, doc);
  mountChanges(app, o, doc);
  mountModels(app, o, doc);
  return app;
}

/** What every operation's document shares: its security scheme and the token's refusals. */
interface Documented {
  security: { bearer: never[] }[];
  common: Record<number, ReturnType<typeof json>>;
}

/** The bearer token on every route but the OpenAPI document, and the body limit on changes. */
function guardPush(app: OpenAPIHono, o: PushApiOptions): void {
  const checkToken = bearer({ warehouse: o.intake.warehouse, envToken: o.token }, scopeOf);
  app.use('/push/*', async (c, next) => (c.req.path === '/push/openapi.json' ? next() : checkToken(c, next)));
  app.use('/push', checkToken);
  app.post(
    '/push/*',
    bodyLimit({
      maxSize: PUSH_MAX_BYTES,
      onError: (c) =>
        c.json({ error: `body: larger than ${PUSH_MAX_BYTES} bytes (at most ${MAX_CHANGES} changes at once)` }, 413),
    }),
  );
}

/** One POST route per kind of change: stores the changes, or previews them with dryRun=true. */
function mountIntake(app: OpenAPIHono, o: PushApiOptions, { security, common }: Documented): void {
  for (const [path, k] of Object.entries(KINDS)) {
    app.openAPIRegistry.registerPath({
      method: 'post',
      path: `/push/${path}`,
      operationId: k.operationId,
      summary: k.summary,
      security,
      'x-scope': 'push',
      request: {
        query: DryRun,
        body: {
          required: true,
          description: 'One change, an array of changes, or NDJSON (one change a line)',
          content: {
            'application/json': { schema: z.union([k.schema, z.array(k.schema)]) },
            'application/x-ndjson': { schema: k.schema },
          },
        },
      },
      responses: {
        200: json(Preview, 'A dry run (dryRun=true): what each change would do; nothing was stored or sent'),
        202: json(Accepted, 'Every change is stored; one entry per change, in order'),
        400: json(Problem, 'The body is not JSON or NDJSON, or dryRun is neither true nor false'),
        422: json(Refused, 'Some changes are refused: nothing was stored'),
        ...common,
      },
    });
    app.post(`/push/${path}`, async (c) => {
      const ndjson = (c.req.header('content-type') ?? '').includes('ndjson');
      const body = parseBody(await c.req.text(), ndjson);
      if ('error' in body) return c.json({ error: body.error }, 400);
      const q = readQuery(c, DryRun);
      if (!q.ok) return q.res;
      const intake = intakeFor(c, o.intake);
      if (q.query.dryRun === 'true') return c.json(await previewPush(intake, k.kind, body.items), 200);
      const result = await pushChanges(intake, actorOf(c), k.kind, body.items);
      if (!result.ok)
        return c.json({ error: 'some changes are refused: nothing was stored', refused: result.refused }, 422);
      return c.json(result.accepted, 202);
    });
  }
}

/** What became of the changes: one by id, the list, and the OpenAPI document itself. */
function mountChanges(app: OpenAPIHono, o: PushApiOptions, { security, common }: Documented): void {
  app.openAPIRegistry.registerPath({
    method: 'get',
    path: '/push/{id}',
    operationId: 'getChange',
    summary: 'What became of one change',
    security,
    'x-scope': 'read',
    request: { params: z.object({ id: z.string().regex(/^\d+$/) }) },
    responses: { 200: json(Status, 'The change'), 404: json(Problem, 'No such change'), ...common },
  });
  const ListQuery = z.object({
    status: z.enum(PUSH_STATES).optional(),
    since: z.iso.datetime({ offset: true }).optional().describe('Changes updated at or after this instant'),
    company: z
      .string()
      .regex(/^[A-Za-z0-9_-]{1,64}$/, 'expected a company key')
      .optional(),
    limit: countParam(10_000).optional(),
  });
  app.openAPIRegistry.registerPath({
    method: 'get',
    path: '/push',
    operationId: 'listChanges',
    summary: 'Changes, newest first',
    security,
    'x-scope': 'read',
    request: { query: ListQuery },
    responses: { 200: json(z.array(Status), 'The changes'), 400: json(Problem, 'A bad query parameter'), ...common },
  });

  app.get('/push/openapi.json', (c) =>
    c.json(
      app.getOpenAPIDocument({
        openapi: '3.0.0',
        info: {
          title: 'workforce-sync push API',
          version: '1',
          // The package is private and grants no licence; the url says what UNLICENSED means.
          license: { name: 'UNLICENSED', url: 'https://docs.npmjs.com/cli/v11/configuring-npm/package-json#license' },
        },
        // Relative: the push API is served by the same ops server as this document, wherever that is reached.
        servers: [{ url: '/', description: 'The ops server serving this document' }],
      }),
    ),
  );
  app.get('/push/:id{[0-9]+}', async (c) => {
    const parsed = ChangeId.safeParse(c.req.param());
    if (!parsed.success) return c.json({ error: `id: ${parsed.error.issues[0]!.message}` }, 400);
    const { id } = parsed.data;
    const found = await getChange(o.intake.warehouse.sql, o.intake.warehouse, id);
    return found && mayActFor(callerOf(c), found.company)
      ? c.json(found)
      : c.json({ error: `no change ${c.req.param('id')}` }, 404);
  });
  app.get('/push', async (c) => list(c, o, ListQuery));
}

/** Postgres's word on an operator's query stays in the log and the CLI: an answer says what failed, not the database's message. */
const withoutDetail = ({ detail: _detail, ...r }: ModelRunResult) => r;

const MODEL_STATUS: Record<ModelErrorKind, 400 | 404 | 409 | 422> = {
  invalid: 400,
  unknown_model: 404,
  already_added: 409,
  query_refused: 422,
};

const Model = z.object({
  name: z.string(),
  company: z.string(),
  kind: z.enum(PUSH_MODEL_KINDS),
  query: z.string(),
  keyField: z.string(),
  fields: z.array(z.string()).describe("The query's columns as service fields"),
  columns: z.array(z.string()),
  cron: z.string().nullable(),
  maxChanges: z.number().int(),
  paused: z.boolean(),
  createdAt: z.string(),
  updatedAt: z.string(),
});
const NewModelBody = z.strictObject({
  name: z.string().regex(MODEL_NAME, 'expected letters, digits, - or _ (at most 64)'),
  kind: z.enum(PUSH_MODEL_KINDS),
  query: z
    .string()
    .min(1)
    .max(100_000)
    .describe("A SELECT of the desired state; its columns are named by the service's fields"),
  key: z
    .string()
    .describe('EmployeeNumber, UniqueNumber or ServiceId (individuals); IndividualCertificationId (certifications)'),
  company: z
    .string()
    .regex(/^[A-Za-z0-9_-]{1,40}$/, 'expected a company key')
    .optional(),
  cron: z.string().max(200).optional(),
  maxChanges: z.number().int().min(1).max(1_000_000).optional(),
});
const ModelChange = z.object({
  key: Value,
  action: z.enum(['insert', 'update']),
  record: z.record(z.string(), z.number().int()).nullable(),
  changed: z.record(z.string(), z.array(Value)),
  unchanged: z.array(z.string()),
  valid: z.boolean(),
  refused: z.record(z.string(), z.string()).optional(),
  changeId: z.string(),
  id: z.number().int().optional(),
});
const ModelRun = z.object({
  model: z.string(),
  company: z.string(),
  runId: z.number().int().optional(),
  outcome: z.enum(PUSH_MODEL_OUTCOMES),
  rowsRead: z.number().int(),
  unchanged: z.number().int(),
  changed: z.number().int(),
  queued: z.number().int(),
  refused: z.number().int(),
  overCap: z.boolean(),
  error: z.string().optional(),
  changes: z.array(ModelChange).describe('A preview: every changed row; a run: the refused rows'),
});
const ModelRunRow = z.object({
  id: z.number().int(),
  model: z.string(),
  company: z.string(),
  startedAt: z.string(),
  finishedAt: z.string().nullable(),
  outcome: z.enum(PUSH_MODEL_OUTCOMES).nullable(),
  rowsRead: z.number().int(),
  unchanged: z.number().int(),
  changed: z.number().int(),
  queued: z.number().int(),
  refused: z.number().int(),
  overCap: z.boolean(),
  error: z.string().nullable(),
});
const ModelName = z.object({ name: z.string().regex(MODEL_NAME) });

/** Push models under /push/models: the CLI's `push model` verbs as JSON routes, behind the push token. */
function mountModels(app: OpenAPIHono, o: PushApiOptions, doc: Documented): void {
  const routes = modelRoutes(app, doc);
  mountOwnModels(app, o);
  mountModelList(app, o, routes);
  mountModelVerbs(app, o, routes);
}

const named = (c: Context): string | undefined =>
  MODEL_NAME.test(c.req.param('name') ?? '') ? c.req.param('name') : undefined;
const badName = (c: Context) => c.json({ error: 'name: expected letters, digits, - or _ (at most 64)' }, 400);

/** A model's refusal as its status and kind; anything else is a fault. */
async function acting(c: Context, act: () => Promise<Response>): Promise<Response> {
  try {
    return await act();
  } catch (err) {
    if (err instanceof ModelError) return c.json({ error: err.message, kind: err.kind }, MODEL_STATUS[err.kind]);
    throw err;
  }
}

const ModelProblem = z.object({
  error: z.string(),
  kind: z.enum(['invalid', 'unknown_model', 'already_added', 'query_refused']).optional(),
});

/** One model operation as the OpenAPI document shows it. */
interface ModelOperation {
  method: 'get' | 'post' | 'delete';
  route: string;
  operationId: string;
  summary: string;
  responses: Record<number, ReturnType<typeof json> | { description: string }>;
  body?: z.ZodType;
}

interface ModelRoutes {
  /** Documents one model operation; reading needs `read`, anything else `admin`. */
  path(operation: ModelOperation): void;
}

function modelRoutes(app: OpenAPIHono, { security, common }: Documented): ModelRoutes {
  const problems = {
    400: json(ModelProblem, 'A bad name or body'),
    404: json(ModelProblem, 'No such model'),
    ...common,
  };
  return {
    path: ({ method, route, operationId, summary, responses, body }) =>
      app.openAPIRegistry.registerPath({
        method,
        path: route,
        operationId,
        summary,
        security,
        'x-scope': method === 'get' ? 'read' : 'admin',
        request: {
          ...(route.includes('{name}') ? { params: ModelName } : {}),
          ...(body ? { body: { required: true, content: { 'application/json': { schema: body } } } } : {}),
        },
        responses: { ...problems, ...responses },
      }),
  };
}

/** A token limited to companies knows only their models. */
function mountOwnModels(app: OpenAPIHono, o: PushApiOptions): void {
  const wh = o.intake.warehouse;
  const ownModel: MiddlewareHandler = async (c, next) => {
    const caller = callerOf(c);
    const name = named(c);
    if (caller.companies.length === 0 || !name) return next();
    const m = (await listModels(wh)).find((x) => x.name === name);
    if (m && !mayActFor(caller, m.company))
      return c.json({ error: `model ${name} does not exist`, kind: 'unknown_model' }, 404);
    return next();
  };
  app.use('/push/models/:name', ownModel);
  app.use('/push/models/:name/*', ownModel);
}

/** The models, and adding one. */
function mountModelList(app: OpenAPIHono, o: PushApiOptions, { path }: ModelRoutes): void {
  const wh = o.intake.warehouse;
  path({
    method: 'get',
    route: '/push/models',
    operationId: 'listModels',
    summary: 'Push models',
    responses: { 200: json(z.array(Model), 'The models, by name') },
  });
  app.get('/push/models', async (c) => c.json((await listModels(wh)).filter((m) => mayActFor(callerOf(c), m.company))));

  path({
    method: 'post',
    route: '/push/models',
    operationId: 'addModel',
    summary: 'Add a push model (its query is planned and its columns checked first)',
    responses: {
      201: json(Model, 'The model'),
      409: json(ModelProblem, 'A model of that name exists'),
      422: json(ModelProblem, 'The query does not plan'),
    },
    body: NewModelBody,
  });
  app.post('/push/models', async (c) => {
    let raw: unknown;
    try {
      raw = await c.req.json();
    } catch {
      return c.json({ error: 'the body is not JSON' }, 400);
    }
    const body = NewModelBody.safeParse(raw);
    if (!body.success) {
      const issue = body.error.issues[0]!;
      return c.json({ error: `${issue.path.join('.') || 'body'}: ${issue.message}`, kind: 'invalid' }, 400);
    }
    const b = body.data;
    const companies = (await knownCompanies(intakeFor(c, o.intake))).map((x) => x.key);
    const company = b.company ?? (companies.length === 1 ? companies[0] : undefined);
    if (company && !mayActFor(callerOf(c), company)) return notForCompany(c, company);
    if (!company) return c.json({ error: 'company: required, several companies are configured', kind: 'invalid' }, 400);
    return acting(c, async () =>
      c.json(
        await addPushModel(
          o.intake,
          actorOf(c),
          {
            name: b.name,
            company,
            kind: b.kind,
            query: b.query,
            keyField: b.key,
            cron: b.cron,
            maxChanges: b.maxChanges,
          },
          companies,
        ),
        201,
      ),
    );
  });
}

/** What an operator does to one model: preview it, run it, read its runs, pause, resume or remove it. */
function mountModelVerbs(app: OpenAPIHono, o: PushApiOptions, { path }: ModelRoutes): void {
  path({
    method: 'get',
    route: '/push/models/{name}/preview',
    operationId: 'previewModel',
    summary: 'What a run would queue and refuse now; nothing is stored or sent',
    responses: { 200: json(ModelRun, 'The dry run') },
  });
  app.get('/push/models/:name/preview', async (c) => {
    const name = named(c);
    return name ? acting(c, async () => c.json(withoutDetail(await previewModel(o.intake, name)))) : badName(c);
  });

  path({
    method: 'post',
    route: '/push/models/{name}/run',
    operationId: 'runModel',
    summary: 'Run the model now: queue what differs',
    responses: { 200: json(ModelRun, 'The run (outcome failed: over its cap or its query failed; nothing queued)') },
  });
  app.post('/push/models/:name/run', async (c) => {
    const name = named(c);
    return name
      ? acting(c, async () => c.json(withoutDetail(await runPushModel(o.intake, actorOf(c), name))))
      : badName(c);
  });

  path({
    method: 'get',
    route: '/push/models/{name}/runs',
    operationId: 'listModelRuns',
    summary: "The model's latest runs, newest first",
    responses: { 200: json(z.array(ModelRunRow), 'The runs') },
  });
  app.get('/push/models/:name/runs', async (c) => {
    const name = named(c);
    return name ? c.json(await listModelRuns(o.intake, { model: name })) : badName(c);
  });

  for (const [verb, paused] of [
    ['pause', true],
    ['resume', false],
  ] as const) {
    path({
      method: 'post',
      route: `/push/models/{name}/${verb}`,
      operationId: `${verb}Model`,
      summary: paused ? 'Pause the model: its cron does not run it' : 'Resume the model on its cron',
      responses: { 200: json(Model, 'The model') },
    });
    app.post(`/push/models/:name/${verb}`, async (c) => {
      const name = named(c);
      return name
        ? acting(c, async () => c.json(await pausePushModel(o.intake, actorOf(c), name, paused)))
        : badName(c);
    });
  }

  path({
    method: 'delete',
    route: '/push/models/{name}',
    operationId: 'removeModel',
    summary: 'Remove the model (its runs and queued changes stay)',
    responses: { 204: { description: 'Removed' } },
  });
  app.delete('/push/models/:name', async (c) => {
    const name = named(c);
    if (!name) return badName(c);
    return acting(c, async () => {
      await removePushModel(o.intake, actorOf(c), name);
      return c.body(null, 204);
    });
  });
}

async function list(
  c: Context,
  o: PushApiOptions,
  schema: z.ZodType<{ status?: (typeof PUSH_STATES)[number]; since?: string; company?: string; limit?: number }>,
) {
  const q = readQuery(c, schema);
  if (!q.ok) return q.res;
  const { status, since, company, limit } = q.query;
  const caller = callerOf(c);
  if (company && !mayActFor(caller, company)) return notForCompany(c, company);
  return c.json(
    await listChanges(o.intake.warehouse.sql, o.intake.warehouse, {
      status,
      since: since ? new Date(since) : undefined,
      company,
      companies: caller.companies.length ? caller.companies : undefined,
      limit,
    }),
  );
}
