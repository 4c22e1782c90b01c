export { openWarehouse, type Warehouse, type OpenOptions } from './connection.ts';
export { targets, targetByName, type Target, type TargetName, type ChildTarget } from './targets.ts';
export { recordKey, refusedRecordKey } from './record-keys.ts';
export { writePage, type CheckpointWrite, type CursorEdit, type WritePageOptions, type WriteResult, type PageWritten } from './upsert.ts';
export { markMissingDeleted, markDeletedByKey, type RangeFilter, type MarkMissingOptions, type MarkByKeyOptions } from './deletions.ts';
export {
  readCheckpoint,
  saveCheckpoint,
  listCheckpoints,
  startRun,
  finishRun,
  readRows,
  type Checkpoint,
  type SyncRun,
  type RunOutcome,
} from './state.ts';
export { mapItem, snake } from './rows.ts';
export { liveKeys, liveRows, type LiveRowsOptions } from './deletions.ts';
export { settledBefore, individualsChangedSince, holdersOutOfStep, type HolderCopies, individualsOutside, changesArrivedSince, startsBetween, credentialHoldersChangedSince, credentialHoldersExpiring, type ChangeColumns, type StartsOptions } from './rereads.ts';
export { takeFence, fenced, isFencedOff, type Fence } from './fencing.ts';
