import { parseArgs } from 'node:util';
import { App } from '../app/index.ts';
import { loadConfig } from '../config.ts';
import { log } from '../log.ts';
import { checkRoleName, listAccess, type AccessGrant } from '../warehouse/access.ts';
import { cliActor } from '../warehouse/audit.ts';
import { UsageError } from './usage-error.ts';

const USAGE = `usage:
  wfsync access grant ROLE --company KEY [--company KEY2 ...] [--personal] [--create]
  wfsync access revoke ROLE [--company KEY ...]
  wfsync access list [--json]

ROLE is a Postgres role of yours: it reads the schema <schema>_analyst (every table and view of the warehouse),
only the rows of the companies granted to it; without --personal, a company's personal columns (names, e-mail,
phones, address, birth date, patients' data, ...) read null. Each company is granted with or without --personal.
--create makes the role, able to log in, with the password read from standard input.
`;

async function readPassword(): Promise<string> {
  if (process.stdin.isTTY) process.stderr.write('password for the new role (then Ctrl-D): ');
  const chunks: Buffer[] = [];
  for await (const chunk of process.stdin) chunks.push(chunk as Buffer);
  return Buffer.concat(chunks)
    .toString('utf8')
    .replace(/\r?\n$/, '');
}

function row(g: AccessGrant): string {
  const companies = g.companies.map((c) => (g.personal.includes(c) ? `${c} (personal)` : `${c} (masked)`));
  return [g.role.padEnd(20), companies.join(', ')].join(' ');
}

export async function runAccessCommand(args: string[]): Promise<number> {
  const { values, positionals } = parseArgs({
    args,
    options: {
      help: { type: 'boolean', short: 'h' },
      json: { type: 'boolean' },
      company: { type: 'string', multiple: true },
      personal: { type: 'boolean' },
      create: { type: 'boolean' },
    },
    allowPositionals: true,
    strict: true,
  });
  const [verb, role, ...extra] = positionals;
  if (values.help || !verb) {
    process.stdout.write(USAGE);
    return values.help ? 0 : 2;
  }
  if (!['grant', 'revoke', 'list'].includes(verb))
    throw new UsageError(`access: unknown subcommand "${verb}"\n${USAGE}`);
  if (verb !== 'list' && role === undefined) throw new UsageError(`access ${verb}: name the ROLE`);
  if (verb === 'list' && role !== undefined) throw new UsageError(`access list: unexpected argument "${role}"`);
  if (extra.length > 0) throw new UsageError(`access ${verb}: unexpected argument "${extra[0]}"`);
  const companies = values.company ?? [];
  if (verb === 'grant' && companies.length === 0)
    throw new UsageError(`access grant ${role}: name at least one --company KEY`);
  if (verb !== 'grant' && (values.personal || values.create))
    throw new UsageError(`access ${verb}: --personal and --create go with grant`);
  if (role !== undefined) checkRoleName(role);
  let password: string | undefined;
  if (values.create) {
    password = await readPassword();
    if (password.length === 0)
      throw new UsageError(`access grant ${role} --create: give the new role's password on standard input`);
  }

  const app = new App(loadConfig(), log);
  try {
    const wh = await app.warehouse();
    if (verb === 'list') {
      const grants = await listAccess(wh);
      process.stdout.write(
        values.json
          ? `${JSON.stringify(grants, null, 2)}\n`
          : grants.length
            ? `${grants.map(row).join('\n')}\n`
            : 'no role has access\n',
      );
    } else if (verb === 'grant') {
      await (await app.companyAdmin()).grant(cliActor(), {
        role: role!,
        companies,
        personal: !!values.personal,
        createWithPassword: password,
      });
      const what = values.personal ? 'with their personal data' : 'with their personal data masked';
      process.stdout.write(
        `role ${role}${values.create ? ' created and' : ''} granted ${companies.join(', ')} ${what}\n`,
      );
    } else {
      const { left } = await (await app.companyAdmin()).revoke(cliActor(), role!, companies);
      process.stdout.write(
        left.length ? `role ${role} keeps ${left.join(', ')}\n` : `role ${role} reads nothing of the warehouse now\n`,
      );
    }
    return 0;
  } finally {
    await app.stop();
  }
}
