import { availableParallelism } from 'node:os';
import { existsSync, readFileSync } from 'node:fs';
import { z } from 'zod';

/** `L/Ws` (or `L/Wms`, `L/Wm`): at most L request starts in any period of W. */
export interface RateLimit {
  limit: number;
  periodMs: number;
}

const RATE_LIMIT = /^\s*(\d+)\s*\/\s*(\d+(?:\.\d+)?)\s*(ms|s|m)?\s*$/;

export function parseRateLimit(text: string): RateLimit {
  const m = RATE_LIMIT.exec(text);
  if (!m) throw new Error(`expected LIMIT/PERIOD such as 100/60s, got "${text}"`);
  const unit = m[3] ?? 's';
  const periodMs = Number(m[2]) * (unit === 'ms' ? 1 : unit === 'm' ? 60_000 : 1000);
  const limit = Number(m[1]);
  if (limit < 1 || periodMs <= 0) throw new Error(`limit and period must be positive, got "${text}"`);
  return { limit, periodMs };
}

export function formatRateLimit(r: RateLimit): string {
  return r.periodMs % 1000 === 0 ? `${r.limit}/${r.periodMs / 1000}s` : `${r.limit}/${r.periodMs}ms`;
}

/**
 * Each default a setting shares with the code that runs without a Config (tests, tools, the sandbox), defined
 * once: the schema below, the README's settings table (settings-docs.ts) and those modules read it from here.
 */
export const DEFAULTS = {
  /** The service's budget: 100 requests a minute per API key. */
  rateLimit: { limit: 100, periodMs: 60_000 } as Readonly<RateLimit>,
  dbSchema: 'workforce',
  httpPort: 8080,
  httpHost: '127.0.0.1',
  dataDir: '.wfsync',
  timezone: 'UTC',
  /** How long a job stays locked to a worker: a worker that dies is noticed after about this long. */
  jobLockMs: 30_000,
  /** How long a page write waits for the warehouse: a Postgres restart or failover takes seconds; a minute is not a restart any more. */
  warehouseOutageMs: 60_000,
  sessionIdleMinutes: 30,
  sessionMaxHours: 12,
  companiesRefreshSeconds: 15,
  /** How long a process may take to stop after SIGTERM or Ctrl-C before it exits anyway. */
  shutdownMs: 15_000,
} as const;

const intList = z.string().transform((s, ctx) => {
  const parts = s
    .split(',')
    .map((p) => p.trim())
    .filter(Boolean);
  const ids = parts.map(Number);
  if (ids.some((n) => !Number.isInteger(n))) {
    ctx.addIssue({ code: 'custom', message: `expected comma-separated integers, got "${s}"` });
    return z.NEVER;
  }
  return ids;
});

/** `localhost:4010` parses as a URL of scheme `localhost:`; the service is reached over http or https only. */
const url = z.url({
  protocol: /^https?$/,
  message: 'expected an http:// or https:// URL such as https://api.example.com/v2',
});

/** Group names, comma-separated. */
const names = z.string().transform((s) =>
  s
    .split(',')
    .map((p) => p.trim())
    .filter(Boolean),
);

const rateLimit = z.string().transform((s, ctx) => {
  try {
    return parseRateLimit(s);
  } catch (e) {
    ctx.addIssue({ code: 'custom', message: (e as Error).message });
    return z.NEVER;
  }
});

/** One company the worker syncs: its key in the warehouse, its API key and base URL. */
export const Company = z.object({
  key: z.string().regex(/^[a-z0-9_-]{1,40}$/i, 'company key: letters, digits, - or _, at most 40'),
  apiKey: z.string().min(1, 'apiKey is required'),
  baseUrl: url.optional(),
  formIds: z.array(z.number().int()).optional(),
  runTypeIds: z.array(z.number().int()).optional(),
  /** The company signs in with single sign-on: an individual pushed without LogonId is accepted. */
  singleSignOn: z.boolean().optional(),
});
export type Company = z.infer<typeof Company>;

const COMPANIES_SHAPE =
  'a JSON array of {key, apiKey, baseUrl?, formIds?, runTypeIds?} or the path of a file holding one';

/**
 * WFS_COMPANIES holds the JSON itself, or the path of a JSON file holding it. It holds API keys: no message
 * quotes it, nor the file's text, nor a parser's message (which may quote either).
 */
function readCompanies(value: string): Company[] {
  const text = value.trimStart();
  const json = text.startsWith('[') || text.startsWith('{') ? value : readCompaniesFile(value);
  let parsed: unknown;
  try {
    parsed = JSON.parse(json);
  } catch {
    throw new Error(`expected ${COMPANIES_SHAPE}; got text that is not valid JSON`);
  }
  if (!Array.isArray(parsed)) {
    throw new Error(
      `expected ${COMPANIES_SHAPE}; got ${parsed === null ? 'null' : `a JSON ${typeof parsed === 'object' ? 'object' : typeof parsed}`}`,
    );
  }
  const result = z.array(Company).min(1, 'at least one company').safeParse(parsed);
  if (!result.success) {
    const issue = result.error.issues[0]!;
    const where = issue.path
      .map((p) => (typeof p === 'number' ? `[${p}]` : `.${String(p)}`))
      .join('')
      .replace(/^\./, '');
    throw new Error(`expected ${COMPANIES_SHAPE}; ${where || 'the list'}: ${issue.message}`);
  }
  return result.data;
}

function readCompaniesFile(path: string): string {
  try {
    return readFileSync(path, 'utf8');
  } catch (e) {
    const code = (e as { code?: string }).code ?? 'unreadable';
    throw new Error(`expected ${COMPANIES_SHAPE}; got neither JSON nor a readable file (${code})`);
  }
}

const companies = z.string().transform((s, ctx) => {
  try {
    return readCompanies(s);
  } catch (e) {
    ctx.addIssue({ code: 'custom', message: (e as Error).message });
    return z.NEVER;
  }
});

/**
 * How long the sync's own bookkeeping is kept: finished runs, resolved rejects, and the payloads of pushed changes
 * once final. The warehouse's data and its history tables are never pruned.
 */
export interface Retention {
  runsDays: number;
  resolvedRejectsDays: number;
  pushPayloadsDays: number;
  /** Personal fields of individuals deleted or Former for longer than this are blocked; unset: kept. */
  formerPersonalDays?: number;
  /** The audit trail of changes. */
  auditDays: number;
}

export const DEFAULT_RETENTION: Retention = {
  runsDays: 30,
  resolvedRejectsDays: 30,
  pushPayloadsDays: 30,
  auditDays: 400,
};

/** A retention horizon in days; a fraction of a day is allowed. */
const days = z.coerce.number().positive('expected a number of days above 0').max(36_500);

export const Env = z.object({
  WFS_BASE_URL: url.optional(),
  WFS_API_KEY: z.string().min(1).optional(),
  WFS_COMPANIES: companies.optional(),
  DATABASE_URL: z
    .string()
    .regex(/^postgres(ql)?:\/\//, 'expected a postgres:// URL')
    .optional(),
  REDIS_URL: z
    .string()
    .regex(/^rediss?:\/\//, 'expected a redis:// URL')
    .optional(),
  WFS_DB_SCHEMA: z
    .string()
    .regex(/^[a-z_][a-z0-9_]{0,62}$/, 'expected a lower-case SQL identifier')
    .default(DEFAULTS.dbSchema),
  WFS_RATE_LIMIT: rateLimit.default({ ...DEFAULTS.rateLimit }),
  WFS_RATE_LIMIT_MARGIN_MS: z.coerce.number().int().min(0).max(60_000).optional(),
  WFS_FORM_IDS: intList.optional(),
  WFS_RUN_TYPE_IDS: intList.optional(),
  WFS_PUSH_TOKEN: z.string().min(16, 'at least 16 characters').optional(),
  WFS_SECRET_KEY: z.string().min(16, 'at least 16 characters').optional(),
  WFS_PUSH_WEBHOOK_URL: url.optional(),
  WFS_HTTP_PORT: z.coerce.number().int().min(0).max(65535).default(DEFAULTS.httpPort),
  WFS_HTTP_HOST: z.string().min(1).default(DEFAULTS.httpHost),
  WFS_METRICS_PORT: z.coerce.number().int().min(0).max(65535).optional(),
  WFS_DASHBOARD_TOKEN: z.string().min(16, 'at least 16 characters').optional(),
  WFS_OIDC_ISSUER: url.optional(),
  WFS_OIDC_CLIENT_ID: z.string().min(1).optional(),
  WFS_OIDC_CLIENT_SECRET: z.string().min(1).optional(),
  WFS_PUBLIC_URL: url.optional(),
  WFS_OIDC_ROLE_CLAIM: z.string().min(1).max(200).default('groups'),
  WFS_OIDC_ADMINS: names.optional(),
  WFS_OIDC_OPERATORS: names.optional(),
  WFS_OIDC_VIEWERS: names.optional(),
  WFS_SESSION_IDLE_MINUTES: z.coerce
    .number()
    .int()
    .min(1)
    .max(24 * 60)
    .default(DEFAULTS.sessionIdleMinutes),
  WFS_SESSION_MAX_HOURS: z.coerce
    .number()
    .int()
    .min(1)
    .max(24 * 30)
    .default(DEFAULTS.sessionMaxHours),
  WFS_COOKIE_SECURE: z
    .enum(['0', '1', 'false', 'true'], { message: 'expected 1 or 0' })
    .transform((v) => v === '1' || v === 'true')
    .default(false),
  WFS_KEEP_RUNS_DAYS: days.default(DEFAULT_RETENTION.runsDays),
  WFS_KEEP_RESOLVED_REJECTS_DAYS: days.default(DEFAULT_RETENTION.resolvedRejectsDays),
  WFS_KEEP_PUSH_PAYLOADS_DAYS: days.default(DEFAULT_RETENTION.pushPayloadsDays),
  WFS_KEEP_FORMER_PERSONAL_DAYS: days.optional(),
  WFS_KEEP_AUDIT_DAYS: days.default(DEFAULT_RETENTION.auditDays),
  WFS_PERSONAL_DATA_KEY: z.string().min(16, 'at least 16 characters').optional(),
  WFS_DATA_DIR: z.string().default(DEFAULTS.dataDir),
  WFS_TIMEZONE: z.string().default(DEFAULTS.timezone),
  WFS_WORKER_CONCURRENCY: z.coerce.number().int().min(1).max(1000).optional(),
  WFS_JOB_LOCK_MS: z.coerce.number().int().min(1000).default(DEFAULTS.jobLockMs),
  WFS_DB_OUTAGE_MS: z.coerce.number().int().min(0).default(DEFAULTS.warehouseOutageMs),
  WFS_SHUTDOWN_MS: z.coerce.number().int().min(1000).default(DEFAULTS.shutdownMs),
  WFS_COMPANIES_REFRESH_SECONDS: z.coerce
    .number()
    .positive('expected a number of seconds above 0')
    .max(3600)
    .default(DEFAULTS.companiesRefreshSeconds),
  LOG_LEVEL: z.enum(['fatal', 'error', 'warn', 'info', 'debug', 'trace', 'silent']).default('info'),
  LOG_FORMAT: z.enum(['json', 'pretty']).optional(),
});

export interface Config {
  /** Companies to sync; empty base URL means the built-in sandbox. */
  companies: Company[];
  /** True when no base URL is set: the worker syncs from the built-in sandbox. */
  sandbox: boolean;
  databaseUrl?: string;
  redisUrl?: string;
  dbSchema: string;
  rateLimit: RateLimit;
  /** Extra time a start stays in the limiter's period, covering network jitter; default 2% of the period, at most 250 ms. */
  rateLimitMarginMs?: number;
  formIds: number[];
  runTypeIds: number[];
  pushToken?: string;
  secretKey?: string;
  /** Key of the personal-data hash (HMAC-SHA-256) and suppression list; unset: a key file under dataDir. */
  personalDataKey?: string;
  /** Where every pushed change's final state is POSTed, signed with the push token. */
  pushWebhookUrl?: string;
  httpPort: number;
  /** Where the status server listens: loopback unless said otherwise (0.0.0.0 in a container). */
  httpHost: string;
  /** Where a `worker` serves its own /metrics (on WFS_HTTP_HOST); unset: it serves none. */
  metricsPort?: number;
  /** Signs an operator in to the dashboard's actions (retry, run now); unset: the dashboard is read-only. */
  dashboardToken?: string;
  /** Sign-in through an OpenID Connect identity provider; unset: the dashboard token (if any) signs in. */
  oidc?: OidcConfig;
  /** Dashboard sessions: idle time and absolute cap, and whether the cookie goes over HTTPS only. */
  sessions: { idleMs: number; maxAgeMs: number; secure: boolean };
  /** How long housekeeping keeps finished runs, resolved rejects and final pushed changes' payloads. */
  retention: Retention;
  dataDir: string;
  timezone: string;
  workerConcurrency: number;
  /** WFS_WORKER_CONCURRENCY was set: the worker keeps it however many companies the companies table holds. */
  workerConcurrencySet?: boolean;
  /** How long a worker holds a job before others may take it over (crash recovery time). */
  jobLockMs: number;
  /** How long writes wait for a warehouse that went away (a restart) before the run fails. */
  dbOutageMs: number;
  /** How long a stop may take before the process exits anyway (the pages in flight are read again from their checkpoints). */
  shutdownMs: number;
  /** How often a running process reads the companies table again (added, paused, rotated, removed companies). */
  companiesRefreshMs: number;
  logLevel: string;
  /** Cron overrides by job name (`WFS_CRON_<JOB>`). */
  cron: Record<string, string>;
}

export interface OidcConfig {
  issuer: string;
  clientId: string;
  clientSecret: string;
  /** The server's external base URL: the callback is `<publicUrl>/signin/callback`. */
  publicUrl: string;
  /** The ID token's claim holding the user's groups. */
  roleClaim: string;
  admins: string[];
  operators: string[];
  /** When set, only these groups (and the admins' and operators') may sign in. */
  viewers?: string[];
}

/** The OIDC settings, all or none of the four that connect. */
function oidcOf(e: z.infer<typeof Env>): OidcConfig | undefined {
  if (!e.WFS_OIDC_ISSUER) return undefined;
  for (const name of ['WFS_OIDC_CLIENT_ID', 'WFS_OIDC_CLIENT_SECRET', 'WFS_PUBLIC_URL'] as const)
    if (!e[name]) throw new ConfigError(`setting ${name}: required when WFS_OIDC_ISSUER is set`);
  return {
    issuer: e.WFS_OIDC_ISSUER,
    clientId: e.WFS_OIDC_CLIENT_ID!,
    clientSecret: e.WFS_OIDC_CLIENT_SECRET!,
    publicUrl: e.WFS_PUBLIC_URL!.replace(/\/+$/, ''),
    roleClaim: e.WFS_OIDC_ROLE_CLAIM,
    admins: e.WFS_OIDC_ADMINS ?? [],
    operators: e.WFS_OIDC_OPERATORS ?? [],
    viewers: e.WFS_OIDC_VIEWERS,
  };
}

export class ConfigError extends Error {
  override readonly name = 'ConfigError';
}

/** Reads the environment (and `.env` when present); a bad setting throws one line naming it. */
export function loadConfig(env: NodeJS.ProcessEnv = process.env): Config {
  // An empty setting (VAR= in .env, ${VAR:-} in compose) means unset, not an invalid value.
  const set = Object.fromEntries(Object.entries(env).filter(([, v]) => v !== undefined && v.trim() !== ''));
  const parsed = Env.safeParse(set);
  if (!parsed.success) {
    const issue = parsed.error.issues[0]!;
    throw new ConfigError(`setting ${String(issue.path[0])}: ${issue.message}`);
  }
  const e = parsed.data;
  const companyList: Company[] = e.WFS_COMPANIES ?? [
    { key: 'default', apiKey: e.WFS_API_KEY ?? '', baseUrl: e.WFS_BASE_URL },
  ];
  const sandbox = companyList.every((c) => !c.baseUrl);
  if (!sandbox && companyList.some((c) => !c.apiKey)) {
    throw new ConfigError('setting WFS_API_KEY: required when WFS_BASE_URL is set');
  }
  const cron: Record<string, string> = {};
  for (const [k, v] of Object.entries(set)) {
    if (k.startsWith('WFS_CRON_') && v) cron[k.slice('WFS_CRON_'.length).toLowerCase().replace(/_/g, '-')] = v;
  }
  return {
    companies: companyList,
    sandbox,
    databaseUrl: e.DATABASE_URL,
    redisUrl: e.REDIS_URL,
    dbSchema: e.WFS_DB_SCHEMA,
    rateLimit: e.WFS_RATE_LIMIT,
    rateLimitMarginMs: e.WFS_RATE_LIMIT_MARGIN_MS,
    formIds: e.WFS_FORM_IDS ?? [],
    runTypeIds: e.WFS_RUN_TYPE_IDS ?? [],
    pushToken: e.WFS_PUSH_TOKEN,
    secretKey: e.WFS_SECRET_KEY,
    personalDataKey: e.WFS_PERSONAL_DATA_KEY,
    pushWebhookUrl: e.WFS_PUSH_WEBHOOK_URL,
    httpPort: e.WFS_HTTP_PORT,
    httpHost: e.WFS_HTTP_HOST,
    metricsPort: e.WFS_METRICS_PORT,
    dashboardToken: e.WFS_DASHBOARD_TOKEN,
    oidc: oidcOf(e),
    sessions: {
      idleMs: e.WFS_SESSION_IDLE_MINUTES * 60_000,
      maxAgeMs: e.WFS_SESSION_MAX_HOURS * 3600_000,
      secure: e.WFS_COOKIE_SECURE,
    },
    retention: {
      runsDays: e.WFS_KEEP_RUNS_DAYS,
      resolvedRejectsDays: e.WFS_KEEP_RESOLVED_REJECTS_DAYS,
      pushPayloadsDays: e.WFS_KEEP_PUSH_PAYLOADS_DAYS,
      formerPersonalDays: e.WFS_KEEP_FORMER_PERSONAL_DAYS,
      auditDays: e.WFS_KEEP_AUDIT_DAYS,
    },
    dataDir: e.WFS_DATA_DIR,
    timezone: e.WFS_TIMEZONE,
    workerConcurrency: e.WFS_WORKER_CONCURRENCY ?? defaultConcurrency(companyList.length),
    workerConcurrencySet: e.WFS_WORKER_CONCURRENCY !== undefined,
    jobLockMs: e.WFS_JOB_LOCK_MS,
    dbOutageMs: e.WFS_DB_OUTAGE_MS,
    shutdownMs: e.WFS_SHUTDOWN_MS,
    companiesRefreshMs: Math.round(e.WFS_COMPANIES_REFRESH_SECONDS * 1000),
    logLevel: e.LOG_LEVEL,
    cron,
  };
}

/**
 * Jobs a worker runs at once when WFS_WORKER_CONCURRENCY is not set: two per company, at least four, and at most
 * 128 per core. A job waiting for its company's budget holds its slot, so with fewer slots than companies some keys
 * sit idle while others wait; with two each, a company's next job is under way while one is finishing. Past 128
 * a core, more runs at once only share the CPU thinner: each stays active longer, and the queue's turns
 * (turns.ts) no longer decide who is served.
 */
export function defaultConcurrency(companies: number, cores = availableParallelism()): number {
  return Math.min(1000, 128 * cores, Math.max(4, 2 * companies));
}

/** Loads `.env` into process.env (existing variables win), as Node does for `--env-file`. */
export function loadDotEnv(path = '.env'): void {
  if (existsSync(path)) process.loadEnvFile(path);
}

/**
 * Against a real service, form and run-log responses are read only for the forms and run types named (the
 * service offers no list of them). One line saying which are not synced and how to turn them on, or undefined.
 */
export function unsyncedFormsNotice(config: Config): string | undefined {
  if (config.sandbox) return undefined;
  const without = (ids: (c: Company) => number[] | undefined, global: number[]) =>
    config.companies.filter((c) => (ids(c) ?? global).length === 0).map((c) => c.key);
  const named = (keys: string[]) => (config.companies.length > 1 ? ` for ${keys.join(', ')}` : '');
  const forms = without((c) => c.formIds, config.formIds);
  const runs = without((c) => c.runTypeIds, config.runTypeIds);
  const parts: string[] = [];
  if (forms.length > 0)
    parts.push(`form responses are not synced${named(forms)} (set WFS_FORM_IDS=12,34 or formIds in WFS_COMPANIES)`);
  if (runs.length > 0)
    parts.push(
      `run-log form responses are not synced${named(runs)} (set WFS_RUN_TYPE_IDS=1,2 or runTypeIds in WFS_COMPANIES)`,
    );
  return parts.length > 0 ? parts.join('; ') : undefined;
}
