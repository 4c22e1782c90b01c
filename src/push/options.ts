import type { Redis } from 'ioredis';
import { z } from 'zod';
import { ConfigError } from '../config.ts';
import type { Logger } from '../log.ts';
import type { Observers } from '../observers.ts';
import type { RedisHealth } from '../redis-health.ts';
import type { SourceClient } from '../source/client.ts';
import type { Warehouse } from '../warehouse/connection.ts';
import type { Sealer } from '../warehouse/secret.ts';

/** The push runner's tunings with their defaults, checked once when the runner is made. */
const Tunings = z.object({
  /** Entities worked on at once by this process. */
  concurrency: z.number().int().positive().default(4),
  /** How often Postgres is swept for work besides notifications, in ms. */
  sweepMs: z.number().int().positive().default(1000),
  /** Verification results per ValidateSubmission. */
  batchSize: z.number().int().positive().default(100),
  /** Attempts before a change that keeps failing is `failed`. */
  maxAttempts: z.number().int().positive().default(12),
  /** BullMQ key prefix (BullMQ's own when unset or empty). */
  prefix: z.string().optional(),
  /** Where each change's final state is POSTed, signed with the token. */
  webhook: z.object({ url: z.url({ protocol: /^https?$/ }), token: z.string().min(1) }).optional(),
});

export type Webhook = NonNullable<z.output<typeof Tunings>['webhook']>;

export interface PushRunnerOptions extends z.input<typeof Tunings> {
  warehouse: Warehouse;
  /** The client of each company, by company key. */
  clients: Pick<ReadonlyMap<string, SourceClient>, 'has' | 'get'>;
  sealer: Sealer;
  log: Logger;
  observers?: Observers;
  /** With a connection, the work goes through the BullMQ `push` queue. */
  redis?: Redis;
  /** Hears the push queue's connection errors, so an outage is one line per process (src/redis-health.ts). */
  health?: RedisHealth;
}

/** The options with every default filled in. */
export type PushSettings = Omit<PushRunnerOptions, keyof z.input<typeof Tunings>> & z.output<typeof Tunings>;

/** Fills in the defaults; a tuning out of range throws one line naming it. */
export function settingsOf(o: PushRunnerOptions): PushSettings {
  const parsed = Tunings.safeParse(o);
  if (!parsed.success) {
    const issue = parsed.error.issues[0]!;
    throw new ConfigError(`push runner option ${issue.path.join('.')}: ${issue.message}`);
  }
  return { ...o, ...parsed.data };
}
