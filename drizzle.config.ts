import { defineConfig } from 'drizzle-kit';

/** Migrations are generated for the default schema; openWarehouse rewrites the name for WFS_DB_SCHEMA. */
export default defineConfig({
  dialect: 'postgresql',
  schema: './src/warehouse/drizzle-kit.cts',
  out: './drizzle',
  migrations: { schema: 'drizzle', table: '__drizzle_migrations_workforce' },
});
