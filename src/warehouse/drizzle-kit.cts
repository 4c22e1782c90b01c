/**
 * What drizzle-kit reads to generate migrations: it requires this file and takes the tables and schema among
 * `Object.values(module.exports)`. CommonJS lets the exports be the spread of warehouseTables(), so the table
 * names are written once, in the domain modules.
 */
import pgCore = require('drizzle-orm/pg-core');
import schema = require('./schema.ts');

export = {
  workforce: pgCore.pgSchema(schema.DEFAULT_SCHEMA),
  ...schema.warehouseTables(schema.DEFAULT_SCHEMA),
};
