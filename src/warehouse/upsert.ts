import type { Warehouse } from './connection.ts';
import { type Pipeline, transaction } from './pipeline.ts';
import { retryThroughOutage } from './outage.ts';
import { sendFenceCheck } from './fencing.ts';
import { mapPage, type MappedPage, type Refusal } from './page-map.ts';
import { fingerprintPage } from './fingerprint.ts';
import { sendRejects } from './rejects.ts';
import { sendCheckpoint, type CheckpointWrite } from './state.ts';
import { applyPersonalData, POLICY_CHANGED } from './personal-data/apply.ts';
import { forgetPolicy } from './personal-data/policy.ts';
import { expectsFreshKeys, noteStoredKeys } from './fresh-keys.ts';
import { noteInserted } from './statistics.ts';
import { isDistributed } from './distribution.ts';
import type { Target } from './targets.ts';
import { type NewRows, type WriteResult, writeMapped } from './target-write.ts';

/**
 * The page write: a mapped page's rows, child rows and history (target-write.ts), its refusals and its checkpoint,
 * in one transaction. Every value travels as text, which Postgres reads as its column's type. Rows to insert or
 * rewrite travel inside one array parameter per column and are unnested: one prepared statement per table
 * whatever the page size, a handful of parameters, no limit on rows per statement but the memory of a chunk.
 */

/** A page to write: mapped already (page-map.ts mapPage, as the sync does), or its records, which are mapped first. */
export type WritePageOptions = PageWrite & (PageMapped | PageRecords);

interface PageMapped {
  page: MappedPage;
  /** The page mapped again from its records: a policy change between mapping and commit has it written anew. */
  remap: () => MappedPage;
}

interface PageWrite {
  target: Target;
  companyKey: string;
  syncedAt: Date;
  stream: string;
  runId?: number;
  checkpoint?: { partition: string } & CheckpointWrite;
}

interface PageRecords {
  items: readonly object[];
  rejects?: readonly Refusal[];
  /** Envelope fields of the page (FormId, FormTitle, RunLogTypeId, ...). */
  extras?: Record<string, unknown>;
}

/** What writePage answers: the counts, and the key text of each record of the page in page order. */
export interface PageWritten extends WriteResult {
  keys: string[];
}

/** Postgres's unique_violation. */
const UNIQUE_VIOLATION = '23505';

/** A key stored already (on Citus too: its page writes are router queries, which keep the worker's SQLSTATE). */
function isUniqueViolation(e: unknown): boolean {
  return (e as { code?: string }).code === UNIQUE_VIOLATION;
}

/**
 * Writes one page in one transaction: its rows (deduplicated by key, last wins), their child rows and history,
 * the records that failed their schema, and the checkpoint the page completes. Either all of it or none.
 */
export async function writePage(wh: Warehouse, o: WritePageOptions): Promise<PageWritten> {
  try {
    return await writePageOnce(wh, o, 'page' in o ? o.page : mapRecords(o));
  } catch (e) {
    // The personal-data policy changed between mapping and writing: map again under the new one.
    if ((e as { code?: string }).code !== POLICY_CHANGED) throw e;
    forgetPolicy(wh, o.companyKey);
    return writePageOnce(wh, o, 'page' in o ? o.remap() : mapRecords(o));
  }
}

const mapRecords = (o: PageWrite & PageRecords) =>
  mapPage(o.target, o.items, { companyKey: o.companyKey, extras: o.extras }, o.rejects);

async function writePageOnce(wh: Warehouse, o: WritePageOptions, page: MappedPage): Promise<PageWritten> {
  fingerprintPage(page);
  const mapped = page.mapped;
  // Child elements that could not be rows are rejects of the page like records that failed their schema.
  const freshKeys = expectsFreshKeys(wh, o.companyKey, o.target);
  const personal = await retryThroughOutage(
    () => applyPersonalData(wh, page, [...page.refused, ...page.childRejects]),
    wh.outage,
  );
  const rejects = personal.rejects;
  const distributed = await isDistributed(wh);
  const into = (pipe: Pipeline) => ({
    pipe,
    schema: wh.schema,
    companyKey: o.companyKey,
    syncedAt: o.syncedAt,
    distributed,
  });
  let envelopeInserted = 0;
  const write = async (newRows: NewRows) =>
    transaction(wh.sessions, async (pipe) => {
      sendFenceCheck(pipe, wh);
      personal.check(pipe);
      if (page.envelope) {
        // The guess of fresh keys is the page's target's; the envelope's keys are always read.
        const e = await writeMapped(
          { ...into(pipe), target: page.envelope.target },
          page.envelope.mapped,
          newRows === 'fresh' ? 'insert' : newRows,
        );
        envelopeInserted = e.inserted;
      }
      const result = await writeMapped({ ...into(pipe), target: o.target }, mapped, newRows, personal.prepare);
      sendRejects(pipe, wh.schema, {
        companyKey: o.companyKey,
        stream: o.stream,
        runId: o.runId,
        rejects,
        written: mapped.map((m) => m.keyText),
      });
      if (o.checkpoint)
        await sendCheckpoint(
          pipe,
          wh.schema,
          { companyKey: o.companyKey, stream: o.stream, partition: o.checkpoint.partition },
          o.checkpoint,
        );
      return result;
    });
  const attempt = async () => {
    try {
      return await write(freshKeys ? 'fresh' : 'insert');
    } catch (e) {
      if (!isUniqueViolation(e)) throw e;
      return write('upsert');
    }
  };
  // A page whose connection was lost rolled back: it is written again once the warehouse is back.
  const result = await retryThroughOutage(attempt, wh.outage);
  noteStoredKeys(wh, o.companyKey, o.target, result.inserted < mapped.length);
  if (page.envelope) await noteInserted(wh, page.envelope.target, envelopeInserted);
  await noteInserted(wh, o.target, result.inserted);
  return { ...result, keys: page.keys };
}
