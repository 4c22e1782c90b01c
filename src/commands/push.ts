import { readFileSync } from 'node:fs';
import { parseArgs } from 'node:util';
import { loadConfig } from '../config.ts';
import { runPushModelCommand } from './push-model.ts';
import { log } from '../log.ts';
import { PUSH_STATES, type PushKind, type PushState } from '../warehouse/tables/push.ts';
import {
  getChange,
  listChanges,
  openPushIntake,
  parseBody,
  previewPush,
  pushChanges,
  retryPush,
  type PushStatus,
} from '../push/index.ts';
import { cliActor } from '../warehouse/audit.ts';
import { UsageError } from './usage-error.ts';

const USAGE = `usage:
  wfsync push individual|certification|verification FILE|-   queue changes (JSON, a JSON array, or NDJSON)
       [--dry-run]                                            only say what each would do: nothing stored or sent
  wfsync push status ID                                       what became of one change
  wfsync push list [--status S] [--since T] [--json]          changes, newest first
  wfsync push retry ID                                        send a failed change again (looked up first)
  wfsync push model add|list|preview|run|pause|resume|remove  push from a SQL query of the desired state
                                                              (wfsync push model --help)

Changes are stored in the push outbox at once; the worker (wfsync start) sends them.
`;

const KINDS: Record<string, PushKind> = {
  individual: 'individual',
  certification: 'certification',
  verification: 'verification',
};

function row(s: PushStatus): string {
  const ids = [
    s.serviceId && `ServiceId ${s.serviceId}`,
    s.individualCertificationId && `IndividualCertificationId ${s.individualCertificationId}`,
  ]
    .filter(Boolean)
    .join(' ');
  return [
    String(s.id).padEnd(8),
    s.status.padEnd(9),
    s.kind.padEnd(14),
    s.changeId.padEnd(38),
    String(s.attempts).padEnd(3),
    ids || s.error || '',
  ].join(' ');
}

function idOf(text: string | undefined): number {
  if (!text || !/^\d+$/.test(text)) throw new UsageError(`push: expected a change id (a number), got "${text ?? ''}"`);
  return Number(text);
}

export async function runPushCommand(args: string[]): Promise<number> {
  if (args[0] === 'model') return runPushModelCommand(args.slice(1));
  const { values, positionals } = parseArgs({
    args,
    options: {
      help: { type: 'boolean', short: 'h' },
      json: { type: 'boolean' },
      status: { type: 'string' },
      since: { type: 'string' },
      'dry-run': { type: 'boolean' },
    },
    allowPositionals: true,
    strict: true,
  });
  const [verb, arg] = positionals;
  if (values.help || !verb) {
    process.stdout.write(USAGE);
    return values.help ? 0 : 2;
  }
  if (values.status && !PUSH_STATES.includes(values.status as PushState))
    throw new UsageError(`push list: --status must be one of ${PUSH_STATES.join(', ')}`);
  const since = values.since ? new Date(values.since) : undefined;
  if (since && Number.isNaN(since.getTime()))
    throw new UsageError(`push list: --since must be a date or date-time, got "${values.since}"`);
  const kind = KINDS[verb];
  if (!kind && !['status', 'list', 'retry'].includes(verb))
    throw new UsageError(`push: unknown subcommand "${verb}"\n${USAGE}`);
  let text: string | undefined;
  if (kind) {
    if (!arg) throw new UsageError(`push ${verb}: name a FILE, or - for standard input`);
    text = readFileSync(arg === '-' ? 0 : arg, 'utf8');
  }
  const ctx = await openPushIntake(loadConfig(), log);
  const wh = ctx.warehouse;
  try {
    if (kind) {
      const body = parseBody(text!, arg!.endsWith('.ndjson') || arg!.endsWith('.jsonl'));
      if ('error' in body) throw new UsageError(`push ${verb}: ${body.error}`);
      if (values['dry-run']) {
        const preview = await previewPush(ctx, kind, body.items);
        process.stdout.write(`${JSON.stringify(preview, null, 2)}\n`);
        return preview.refused > 0 ? 1 : 0;
      }
      const result = await pushChanges(ctx, cliActor(), kind, body.items);
      if (!result.ok) {
        process.stdout.write(
          `${JSON.stringify({ error: 'some changes are refused: nothing was stored', refused: result.refused }, null, 2)}\n`,
        );
        return 1;
      }
      process.stdout.write(`${JSON.stringify(result.accepted, null, 2)}\n`);
      return 0;
    }
    if (verb === 'list') {
      const list = await listChanges(wh.sql, wh, { status: values.status as PushState | undefined, since });
      process.stdout.write(
        values.json
          ? `${JSON.stringify(list, null, 2)}\n`
          : list.map(row).join('\n') + (list.length ? '\n' : 'no changes\n'),
      );
      return 0;
    }
    const id = idOf(arg);
    const found = verb === 'retry' ? await retryPush(ctx, cliActor(), id) : await getChange(wh.sql, wh, id);
    if (!found) {
      process.stderr.write(`push ${verb}: no change ${id}\n`);
      return 1;
    }
    process.stdout.write(`${JSON.stringify(found, null, 2)}\n`);
    return verb === 'retry' && !['queued', 'in_doubt'].includes(found.status) ? 1 : 0;
  } finally {
    await ctx.close();
  }
}
