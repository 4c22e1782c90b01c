import { parseArgs } from 'node:util';
import { App } from '../app/index.ts';
import { loadConfig } from '../config.ts';
import { log } from '../log.ts';
import { listTokens, type ApiToken } from '../warehouse/api-tokens.ts';
import { cliActor } from '../warehouse/audit.ts';
import { UsageError } from './usage-error.ts';

const USAGE = `usage:
  wfsync tokens create NAME --scope push|read|admin [--scope ...] [--company KEY ...]
  wfsync tokens list [--json]
  wfsync tokens revoke NAME

A token is the bearer token of the push API and the JSON routes (Authorization: Bearer TOKEN). create prints it
once: it is stored only as a hash. push pushes changes (and dry runs); read reads push status, timelines, usage
and events; admin is the companies, personal-data, erasure and access routes and the audit. With --company the
token acts on those companies only. revoke takes effect on every server at its next request.
`;

const day = (d: Date | null) => (d ? d.toISOString().replace('T', ' ').slice(0, 16) : 'never');

function row(t: ApiToken): string {
  return [
    t.name.padEnd(20),
    t.scopes.join(',').padEnd(17),
    (t.companies.join(',') || 'every company').padEnd(20),
    `made ${day(t.createdAt)} by ${t.createdBy}`.padEnd(44),
    `last used ${day(t.lastUsedAt)}`,
  ].join(' ');
}

export async function runTokensCommand(args: string[]): Promise<number> {
  const { values, positionals } = parseArgs({
    args,
    options: {
      help: { type: 'boolean', short: 'h' },
      json: { type: 'boolean' },
      scope: { type: 'string', multiple: true },
      company: { type: 'string', multiple: true },
    },
    allowPositionals: true,
    strict: true,
  });
  const [verb, name, ...extra] = positionals;
  if (values.help || !verb) {
    process.stdout.write(USAGE);
    return values.help ? 0 : 2;
  }
  if (!['create', 'list', 'revoke'].includes(verb)) throw new UsageError(`tokens: unknown subcommand "${verb}"`);
  if (verb !== 'list' && !name) throw new UsageError(`tokens ${verb}: name the token`);
  if (extra.length > 0 || (verb === 'list' && name))
    throw new UsageError(`tokens ${verb}: unexpected argument "${(name && verb === 'list' ? name : extra[0])!}"`);
  if (verb !== 'create' && (values.scope || values.company))
    throw new UsageError(`tokens ${verb}: --scope and --company go with create`);

  const app = new App(loadConfig(), log);
  try {
    if (verb === 'list') {
      const tokens = await listTokens(await app.warehouse());
      process.stdout.write(
        values.json
          ? `${JSON.stringify(tokens, null, 2)}\n`
          : tokens.length
            ? `${tokens.map(row).join('\n')}\n`
            : 'no tokens\n',
      );
      return 0;
    }
    const admin = await app.companyAdmin();
    if (verb === 'revoke') {
      await admin.revokeToken(cliActor(), name!);
      process.stdout.write(`token ${name} revoked: every server refuses it from its next request\n`);
      return 0;
    }
    const made = await admin.createToken(cliActor(), {
      name: name!,
      scopes: values.scope ?? [],
      companies: values.company ?? [],
      configured: app.config.companies.map((c) => c.key),
    });
    process.stderr.write(`token ${name} made; it is shown this once, keep it in your secret store:\n`);
    process.stdout.write(`${made.token}\n`);
    return 0;
  } finally {
    await app.stop();
  }
}
