import { randomBytes } from 'node:crypto';
import postgres from 'postgres';
import { inject } from 'vitest';

/** A fresh database on the shared test server, so test files never see each other's rows. */
export async function freshDatabase(): Promise<string> {
  const admin = inject('databaseUrl');
  const name = `t_${randomBytes(6).toString('hex')}`;
  const sql = postgres(admin, { max: 1, onnotice: () => {} });
  await sql.unsafe(`create database ${name}`);
  await sql.end();
  return admin.replace(/\/[^/]*$/, `/${name}`);
}
