/**
 * What each setting of `src/config.ts` means, for the README's settings table (`npm run docs` writes it, and a
 * test fails when a setting of the schema has no entry here, or the README's table differs).
 */
import { DEFAULT_RETENTION, DEFAULTS, formatRateLimit } from './config.ts';

/** Defaults as the table shows them: each in code, read from where the code reads it. */
const code = (...values: readonly (string | number)[]) => values.map((v) => `\`${v}\``).join(', ');

export interface SettingDoc {
  /** Settings documented together; `WFS_CRON_<JOB>` stands for a family the schema reads by prefix. */
  names: string[];
  meaning: string;
  default: string;
}

export const SETTING_DOCS: readonly SettingDoc[] = [
  { names: ['WFS_BASE_URL'], meaning: "the service's base URL", default: 'the built-in sandbox' },
  { names: ['WFS_API_KEY'], meaning: "the company's API key (required with `WFS_BASE_URL`)", default: '' },
  {
    names: ['WFS_COMPANIES'],
    meaning:
      'several companies, as JSON or the path of a JSON file: `[{"key":"north","apiKey":"…","baseUrl":"…","formIds":[12],"runTypeIds":[1]}]`. Each company has its own budget and jobs, and its rows carry its `company_key`',
    default: 'one company, `default`',
  },
  {
    names: ['WFS_RATE_LIMIT'],
    meaning: 'requests per period per API key, e.g. `100/60s`, `100/1s`, `5/250ms`',
    default: code(formatRateLimit(DEFAULTS.rateLimit)),
  },
  {
    names: ['WFS_RATE_LIMIT_MARGIN_MS'],
    meaning: 'extra time each request stays counted in its period, to cover network jitter',
    default: '2% of the period, at most 250 ms',
  },
  {
    names: ['WFS_FORM_IDS', 'WFS_RUN_TYPE_IDS'],
    meaning: 'generic form ids and run-log type ids to sync',
    default: "none (the sandbox's own with the sandbox)",
  },
  {
    names: ['DATABASE_URL'],
    meaning: 'Postgres warehouse (`?host=/dir` in the URL: its Unix socket in that directory)',
    default: 'embedded Postgres under `WFS_DATA_DIR`',
  },
  { names: ['WFS_DB_SCHEMA'], meaning: 'warehouse schema', default: code(DEFAULTS.dbSchema) },
  {
    names: ['REDIS_URL'],
    meaning: 'Redis for the queue and the shared limiter',
    default: 'in-process jobs, in-memory limiter',
  },
  {
    names: ['WFS_CRON_<JOB>'],
    meaning: "overrides a job's cron, e.g. `WFS_CRON_SHIFT_ASSIGNMENTS='*/5 * * * *'` (6 fields for seconds)",
    default: 'see Jobs',
  },
  { names: ['WFS_TIMEZONE'], meaning: 'timezone of the crons', default: code(DEFAULTS.timezone) },
  {
    names: ['WFS_WORKER_CONCURRENCY'],
    meaning: "jobs a worker runs at once (a job waiting for its company's budget holds its slot)",
    default: 'two per company, at least `4`, at most 128 per core',
  },
  {
    names: ['WFS_JOB_LOCK_MS'],
    meaning: 'how long a job stays locked to a worker; a worker that dies is noticed after about this long',
    default: code(DEFAULTS.jobLockMs),
  },
  {
    names: ['WFS_SHUTDOWN_MS'],
    meaning:
      'how long a process may take to stop after SIGTERM or Ctrl-C; then it exits anyway (non-zero), and the pages it was writing are read again from their checkpoints',
    default: code(DEFAULTS.shutdownMs),
  },
  {
    names: ['WFS_DB_OUTAGE_MS'],
    meaning: 'how long a page write waits for a warehouse that went away (a restart) before the stream fails',
    default: code(DEFAULTS.warehouseOutageMs),
  },
  {
    names: ['WFS_PUSH_TOKEN'],
    meaning:
      'a bearer token of the push API and the JSON routes with every scope (the token named `env`; named ones: `wfsync tokens`), and the key signing webhook calls (at least 16 characters)',
    default: 'named tokens only',
  },
  {
    names: ['WFS_SECRET_KEY'],
    meaning:
      'encrypts SSNs in the push outbox and API keys in the `companies` table (AES-256-GCM; at least 16 characters); every process of one warehouse needs the same',
    default: 'a random key in `WFS_DATA_DIR/secret.key` (mode 0600)',
  },
  {
    names: ['WFS_COMPANIES_REFRESH_SECONDS'],
    meaning:
      '(`start`, `scheduler`, `worker`) how often a running process reads the `companies` table again: a company added, paused, resumed, removed or with a rotated key takes effect within this long',
    default: code(DEFAULTS.companiesRefreshSeconds),
  },
  {
    names: ['WFS_PUSH_WEBHOOK_URL'],
    meaning: "where each pushed change's final state is POSTed, signed with `WFS_PUSH_TOKEN`",
    default: 'none',
  },
  {
    names: ['WFS_HTTP_PORT', 'WFS_HTTP_HOST'],
    meaning: 'ops server address (`start`, `serve`)',
    default: code(DEFAULTS.httpPort, DEFAULTS.httpHost),
  },
  {
    names: ['WFS_METRICS_PORT'],
    meaning:
      'where a `worker` serves its own `/metrics`, `/health` and `/ready` (on `WFS_HTTP_HOST`; `0` picks a free port and logs it)',
    default: 'none: a worker serves nothing',
  },
  {
    names: ['WFS_DASHBOARD_TOKEN'],
    meaning:
      'signs in the one admin of the dashboard (`/signin`), as `token:dashboard`, when no identity provider is set (at least 16 characters)',
    default: 'the dashboard is read-only; payloads show only on loopback',
  },
  {
    names: ['WFS_OIDC_ISSUER', 'WFS_OIDC_CLIENT_ID', 'WFS_OIDC_CLIENT_SECRET', 'WFS_PUBLIC_URL'],
    meaning:
      'sign-in through an OpenID Connect identity provider (its issuer URL, this client at it), the callback being `WFS_PUBLIC_URL/signin/callback`; with them the dashboard token no longer signs in (see Security)',
    default: 'the dashboard token signs in',
  },
  {
    names: ['WFS_OIDC_ROLE_CLAIM', 'WFS_OIDC_ADMINS', 'WFS_OIDC_OPERATORS', 'WFS_OIDC_VIEWERS'],
    meaning:
      "the ID token's claim holding the user's groups, and the groups (comma-separated) that are admins and operators; anyone else is a viewer, or refused when `WFS_OIDC_VIEWERS` lists groups and theirs is not one",
    default: '`groups`; none; none; everyone',
  },
  {
    names: ['WFS_SESSION_IDLE_MINUTES', 'WFS_SESSION_MAX_HOURS'],
    meaning:
      'a dashboard session ends after this long unused, and this long after sign-in however busy (sessions live in the warehouse: a restart keeps them)',
    default: code(DEFAULTS.sessionIdleMinutes, DEFAULTS.sessionMaxHours),
  },
  {
    names: ['WFS_COOKIE_SECURE'],
    meaning:
      '`1` when the ops server is reached over HTTPS (TLS at a proxy): the session cookie is then sent over HTTPS only',
    default: '`0`',
  },
  {
    names: ['WFS_KEEP_RUNS_DAYS', 'WFS_KEEP_RESOLVED_REJECTS_DAYS', 'WFS_KEEP_PUSH_PAYLOADS_DAYS'],
    meaning:
      "how long the daily `housekeeping` job keeps finished runs (each stream's latest and latest successful run stay) and the companies' timeline events, rejects once resolved, and the payload and sealed SSN of pushed changes once final (the row and its outcome stay); days, fractions allowed",
    default: code(
      DEFAULT_RETENTION.runsDays,
      DEFAULT_RETENTION.resolvedRejectsDays,
      DEFAULT_RETENTION.pushPayloadsDays,
    ),
  },
  {
    names: ['WFS_KEEP_FORMER_PERSONAL_DAYS'],
    meaning:
      'the daily `housekeeping` job blocks every personal field of an individual deleted at the service, or `Former`, for longer than this (as an erasure: see Personal data); days, fractions allowed',
    default: 'kept',
  },
  {
    names: ['WFS_KEEP_AUDIT_DAYS'],
    meaning:
      'how long the daily `housekeeping` job keeps the audit trail of changes (`wfsync audit`); days, fractions allowed',
    default: code(DEFAULT_RETENTION.auditDays),
  },
  {
    names: ['WFS_PERSONAL_DATA_KEY'],
    meaning:
      'key of the `hash` policy (HMAC-SHA-256) and of the erased people list (at least 16 characters); every process of one warehouse needs the same, and changing it changes every hash',
    default: 'a random key in `WFS_DATA_DIR/personal-data.key` (mode 0600)',
  },
  { names: ['WFS_DATA_DIR'], meaning: 'where the embedded Postgres lives', default: code(DEFAULTS.dataDir) },
  { names: ['LOG_LEVEL'], meaning: 'pino level (`debug` also prints stacks for errors)', default: '`info`' },
  { names: ['LOG_FORMAT'], meaning: '`json` or `pretty`', default: '`pretty` when stderr is a terminal, else `json`' },
];

/** The README's settings table. */
export function settingsTable(): string {
  const rows = SETTING_DOCS.map(
    (s) => `| ${s.names.map((n) => `\`${n}\``).join(', ')} | ${s.meaning} | ${s.default} |`,
  );
  return ['| setting | meaning | default |', '|---|---|---|', ...rows].join('\n');
}
