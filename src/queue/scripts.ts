import { readFileSync } from 'node:fs';
import { fileURLToPath } from 'node:url';
import type { Redis } from 'ioredis';

/**
 * What the sync queue keeps in Redis under its own keys, and the Lua scripts that change it (src/queue/lua/, one
 * file each). BullMQ's keys are BullMQ's: it only ever holds the runs a worker's free slots can take.
 */

/** The runs queued and not yet given out, by their order: a turn's end in ms, or a backfill's place after every turn. */
export const DUE_KEY = 'wfsync:sync:due';
/** Each queued run's entry (`{ jobId, order, data }`), by `company.job`: due, held, or waiting behind a fed run. */
export const RUNS_KEY = 'wfsync:sync:runs';
/** Queued runs held until a time (a spread share, a stalled run's retry), by `company.job`. */
export const LATER_KEY = 'wfsync:sync:later';
/** The runs given to BullMQ and not yet finished, by `company.job`: its entry, with the BullMQ job id. */
export const FED_KEY = 'wfsync:sync:fed';
/** When each queued run became due (or will), by `company.job`: the oldest one's wait is the schedule's delay. */
export const QUEUED_KEY = 'wfsync:sync:queued';

/** Held by the one feed giving runs out (feed.lua) until they are on BullMQ's wait list (release-feed.lua). */
export const FEEDING_KEY = 'wfsync:sync:feeding';

/** The field or member naming a company's runs of a job in every key above, and in the turns' (turns.ts). */
export const memberOf = (company: string, job: string) => `${company}.${job}`;

/** Resolved from the project's root, so that the bundle two directories below it finds them as the sources do. */
const LUA_DIR = fileURLToPath(new URL('../../src/queue/lua/', import.meta.url));

const SCRIPTS = {
  queueRun: { file: 'queue-run.lua', keys: 5 },
  feed: { file: 'feed.lua', keys: 6 },
  releaseFeed: { file: 'release-feed.lua', keys: 1 },
  finish: { file: 'finish.lua', keys: 4 },
  takeTurn: { file: 'take-turn.lua', keys: 2 },
} as const;

export type ScriptName = keyof typeof SCRIPTS;

const sources = new Map<ScriptName, string>();
const defined = new WeakSet<Redis>();

function sourceOf(name: ScriptName): string {
  let lua = sources.get(name);
  if (lua === undefined) {
    lua = readFileSync(`${LUA_DIR}${SCRIPTS[name].file}`, 'utf8');
    sources.set(name, lua);
  }
  return lua;
}

/** Defines the scripts on a connection once, as ioredis commands (EVALSHA, loaded on first use). */
function define(connection: Redis): void {
  if (defined.has(connection)) return;
  for (const name of Object.keys(SCRIPTS) as ScriptName[]) {
    connection.defineCommand(`wfsync_${name}`, { numberOfKeys: SCRIPTS[name].keys, lua: sourceOf(name) });
  }
  defined.add(connection);
}

type Call = (...args: (string | number)[]) => Promise<unknown>;

/** Runs a script: KEYS then ARGV. */
export function runScript(
  connection: Redis,
  name: ScriptName,
  keys: readonly string[],
  args: readonly (string | number)[],
): Promise<unknown> {
  define(connection);
  const call = (connection as unknown as Record<string, Call>)[`wfsync_${name}`]!;
  return call.call(connection, ...keys, ...args);
}
