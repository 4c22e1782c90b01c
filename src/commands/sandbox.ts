import { parseArgs } from 'node:util';
import { DEFAULTS, formatRateLimit, parseRateLimit, type RateLimit } from '../config.ts';
import { parseFaults, type FaultSpec } from '../sandbox/faults.ts';
import {
  QUIRKS,
  SANDBOX_SIZES,
  startSandbox,
  type Quirk,
  type SandboxOptions,
  type SandboxSize,
} from '../sandbox/index.ts';
import { SCOPES, parseKeySpec, type ApiKey } from '../sandbox/keys.ts';
import { shutdownSignal } from '../shutdown.ts';
import { DEFAULT_LATE_MS } from '../sandbox/data.ts';

const HELP = `usage: wfsync sandbox [options]

Serves the simulated workforce service until interrupted (Ctrl-C / SIGTERM).

options:
  --port N            port to listen on (default 4010; 0 picks a free port)
  --host ADDR         address to bind (default 127.0.0.1; the /_sandbox/ admin routes need no key)
  --seed N            data seed (default 1): the same seed gives the same data
  --size SIZE         ${SANDBOX_SIZES.join(' | ')} (default small)
  --key KEY[:SCOPES]  an accepted API key, repeatable; SCOPES is a comma-separated list of
                      ${SCOPES.join(', ')}; a key without scopes has all of them (default: sandbox-key)
  --rate-limit L/W    requests per key per period, e.g. 100/60s (default), 100/1s, 5/250ms; "off" disables
  --latency-ms N      added to every API response (default 0)
  --quirks LIST       known departures of the real service from the spec, off by default:
                        date-times     \`date\` fields as date-times, e.g. 1980-01-02T00:00:00.000-06:00
                        single-object  a plain-array list of one item answered as the item alone
                        bare-array     an envelope list answered as its Data array alone
  --late-ms N         change records and audit rows may be stamped up to N ms before they become
                      visible (default 1800000, 30 minutes; 0 stamps every event when it happens)
  --faults SPEC       comma-separated faults, off by default:
                        500=P            answer 500 internal_server_error before processing (a write is not applied)
                        reset=P          reset the connection before processing (a write is not applied)
                        lost=P           process (a write is applied), then drop the connection unanswered
                        slow=P:MS        process at once, answer MS milliseconds late
                        truncate=P       process, then send a body shorter than its Content-Length and close
                        304=P            apply a write, then answer a bare 304 (writes only)
                        storm=EVERY:FOR  answer 429 to everything for the first FOR ms of every EVERY ms
                        only=writes      only writes meet the faults (only=reads: only reads); storms meet all
                      P is a probability (0-1) per request, reads and writes alike unless only= says
                      e.g. --faults 500=0.1,reset=0.05,lost=0.02,slow=0.1:2000,truncate=0.05,storm=10000:2000
                           --faults lost=0.1,reset=0.05,500=0.05,only=writes
  --help              this text

admin routes (no key, not rate limited): POST /_sandbox/advance?hours=N, GET /_sandbox/truth/<endpoint>,
GET /_sandbox/now, GET /_sandbox/info, GET /_sandbox/stats, GET|POST /_sandbox/faults (JSON FaultSpec)
`;

class UsageError extends Error {}

function int(name: string, text: string | undefined, fallback: number, min: number, max: number): number {
  if (text === undefined) return fallback;
  const n = Number(text);
  if (!/^\d+$/.test(text) || n < min || n > max)
    throw new UsageError(`--${name}: expected an integer ${min}-${max}, got "${text}"`);
  return n;
}

function wrap<T>(name: string, fn: () => T): T {
  try {
    return fn();
  } catch (e) {
    const message = (e as Error).message;
    throw new UsageError(message.startsWith('--') ? message : `--${name}: ${message}`);
  }
}

type Values = ReturnType<typeof parse>['values'];

function parse(args: string[]) {
  return parseArgs({
    args,
    strict: true,
    allowPositionals: false,
    options: {
      port: { type: 'string' },
      host: { type: 'string' },
      seed: { type: 'string' },
      size: { type: 'string' },
      key: { type: 'string', multiple: true },
      'rate-limit': { type: 'string' },
      'latency-ms': { type: 'string' },
      faults: { type: 'string' },
      'late-ms': { type: 'string' },
      quirks: { type: 'string' },
      help: { type: 'boolean', short: 'h' },
    },
  });
}

function size(text: string | undefined): SandboxSize {
  if (text === undefined) return 'small';
  if (!(SANDBOX_SIZES as readonly string[]).includes(text)) {
    throw new UsageError(`--size: expected ${SANDBOX_SIZES.join(', ')}, got "${text}"`);
  }
  return text as SandboxSize;
}

function quirks(text: string | undefined): Quirk[] {
  if (text === undefined) return [];
  const names = text
    .split(',')
    .map((s) => s.trim())
    .filter(Boolean);
  for (const n of names)
    if (!(QUIRKS as readonly string[]).includes(n))
      throw new UsageError(`--quirks: unknown quirk "${n}" (known: ${QUIRKS.join(', ')})`);
  return names as Quirk[];
}

function rateLimit(text: string | undefined): RateLimit | null {
  if (text === undefined) return { ...DEFAULTS.rateLimit };
  if (text === 'off') return null;
  return wrap('rate-limit', () => parseRateLimit(text));
}

/** Command-line options → sandbox options; throws UsageError naming the bad option. */
export function sandboxOptions(v: Values): SandboxOptions {
  const keys: ApiKey[] | undefined = v.key?.map((k) => wrap('key', () => parseKeySpec(k)));
  const faults: FaultSpec | undefined =
    v.faults === undefined ? undefined : wrap('faults', () => parseFaults(v.faults!));
  return {
    port: int('port', v.port, 4010, 0, 65535),
    host: v.host ?? '127.0.0.1',
    seed: int('seed', v.seed, 1, 0, 2 ** 32 - 1),
    size: size(v.size),
    keys,
    rateLimit: rateLimit(v['rate-limit']),
    latencyMs: int('latency-ms', v['latency-ms'], 0, 0, 600_000),
    faults,
    quirks: quirks(v.quirks),
    lateMs: int('late-ms', v['late-ms'], DEFAULT_LATE_MS, 0, 86_400_000),
  };
}

/** `wfsync sandbox`: a bad option is one line naming it and exit code 2. */
export async function runSandboxCommand(args: string[]): Promise<number> {
  let options: SandboxOptions;
  try {
    const { values } = parse(args);
    if (values.help) {
      process.stdout.write(HELP);
      return 0;
    }
    options = sandboxOptions(values);
  } catch (e) {
    const code = (e as { code?: string }).code;
    if (!(e instanceof UsageError) && !code?.startsWith('ERR_PARSE_ARGS')) throw e;
    process.stderr.write(`wfsync sandbox: ${(e as Error).message}\n`);
    return 2;
  }
  const sandbox = await startSandbox(options);
  const limit = options.rateLimit ? `${formatRateLimit(options.rateLimit)} per key` : 'no rate limit';
  const keys = options.keys?.map((k) => k.key).join(', ') ?? sandbox.apiKey;
  process.stdout.write(
    `sandbox serving ${sandbox.url}  api key: ${keys}  (${limit}; seed ${options.seed}, size ${options.size})\n`,
  );
  const signal = await shutdownSignal();
  process.stdout.write(`sandbox stopping (${signal})\n`);
  await sandbox.close();
  return 0;
}
