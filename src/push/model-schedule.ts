import { Cron } from 'croner';
import type { Logger } from '../log.ts';
import type { IntakeContext } from './intake.ts';
import { runModel } from './model-run.ts';
import { modelsTable, runsTable } from './models.ts';

/**
 * Runs each push model on its cron. Models are read from push_models at every check, so one added, paused or
 * removed while running is seen without a restart. A model is due when its cron's next time after its last run
 * (or after it was added) has come; the run is taken under a Postgres advisory lock and the last run read again
 * under it: one that started since the check means another process ran it, so two processes run a due model once.
 */

export interface ModelSchedulerOptions {
  intake: IntakeContext;
  log: Logger;
  /** How often the models are checked, in ms. */
  checkMs?: number;
}

interface DueRow {
  name: string;
  cron: string;
  since: Date;
}

export class ModelScheduler {
  readonly #o: Required<ModelSchedulerOptions>;
  #timer: NodeJS.Timeout | undefined;
  #checking: Promise<void> | undefined;
  #stopped = false;

  constructor(o: ModelSchedulerOptions) {
    this.#o = { checkMs: 15_000, ...o, log: o.log.child({ component: 'push-models' }) };
  }

  start(): void {
    this.#stopped = false;
    this.#timer = setInterval(() => this.#kick(), this.#o.checkMs);
    this.#kick();
  }

  async stop(): Promise<void> {
    this.#stopped = true;
    if (this.#timer) clearInterval(this.#timer);
    await this.#checking;
  }

  #kick(): void {
    if (this.#checking || this.#stopped) return;
    this.#checking = this.check()
      .catch((err: unknown) =>
        this.#o.log.error({ err: err instanceof Error ? err.message : String(err) }, 'push model check failed'),
      )
      .finally(() => (this.#checking = undefined));
  }

  /** Runs every model that is due now; returns when they have run. */
  async check(now = new Date()): Promise<void> {
    for (const m of await this.#scheduled()) {
      if (this.#stopped) return;
      if (isDue(m, now)) await this.#runOnce(m);
    }
  }

  async #scheduled(): Promise<DueRow[]> {
    const wh = this.#o.intake.warehouse;
    return wh.sql.unsafe<DueRow[]>(
      // A join, not a subquery per model: on Citus the models are a reference table, which no subquery may correlate.
      `select m.name, m.cron, coalesce(r.since, m.created_at) as since
       from ${modelsTable(wh)} m
       left join (select model_name, max(started_at) as since from ${runsTable(wh)} group by model_name) r on r.model_name = m.name
       where not m.paused and m.cron is not null order by m.name`,
    );
  }

  async #runOnce(m: DueRow): Promise<void> {
    const name = m.name;
    const wh = this.#o.intake.warehouse;
    const conn = await wh.sql.reserve();
    const lock = `push-model/${name}`;
    try {
      const [{ locked }] = (await conn.unsafe(`select pg_try_advisory_lock(hashtextextended($1, 0)) as locked`, [
        lock,
      ])) as unknown as [{ locked: boolean }];
      if (!locked) return;
      try {
        // Another process may have run it (or an operator removed or paused it) between the check and the lock.
        const again = (await this.#scheduled()).find((x) => x.name === name);
        if (!again || again.since.getTime() !== m.since.getTime()) return;
        const result = await runModel(this.#o.intake, name);
        const level = result.outcome === 'ok' ? 'info' : 'warn';
        const { changes: _changes, ...counts } = result;
        this.#o.log[level]({ ...counts, company: result.company }, 'push model run');
      } finally {
        await conn.unsafe(`select pg_advisory_unlock(hashtextextended($1, 0))`, [lock]);
      }
    } finally {
      conn.release();
    }
  }
}

function isDue(m: DueRow, now: Date): boolean {
  const next = new Cron(m.cron, { paused: true, timezone: 'UTC' }).nextRun(m.since);
  return next !== null && next <= now;
}
