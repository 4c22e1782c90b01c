import type { JobDef } from '../src/queue/job.ts';
import { STREAM_NAMES, type StreamName } from '../src/resources/index.ts';
import referenceLists from './reference-lists.ts';
import individuals from './individuals.ts';
import credentials from './credentials.ts';
import credentialsFullRefresh from './credentials-full-refresh.ts';
import credentialStatus from './credential-status.ts';
import shiftAssignments from './shift-assignments.ts';
import timeOff from './time-off.ts';
import courses from './courses.ts';
import forms from './forms.ts';
import runLogForms from './run-log-forms.ts';
import formAudit from './form-audit.ts';
import housekeeping from './housekeeping.ts';

const declared = [
  referenceLists,
  individuals,
  credentials,
  credentialStatus,
  shiftAssignments,
  timeOff,
  courses,
  forms,
  runLogForms,
  formAudit,
  credentialsFullRefresh,
  housekeeping,
] as const;

/** Compiles only when some job runs every stream of the catalog: `Unscheduled` lists the ones none runs. */
type Unscheduled = Exclude<StreamName, (typeof declared)[number]['streams'][number]>;
type Assert<T extends true> = T;
export type EveryStreamScheduled = Assert<[Unscheduled] extends [never] ? true : false>;

/** Where a job comes in a first sync: at its first stream's place in the run order; full re-reads and jobs that read no stream last. */
function rank(job: JobDef): number {
  const first = Math.min(...job.streams.map((s) => STREAM_NAMES.indexOf(s)));
  return (job.fullRefresh ? STREAM_NAMES.length : 0) + (Number.isFinite(first) ? first : 2 * STREAM_NAMES.length);
}

/** Every scheduled job, in the order a first sync runs them (derived from the streams' run order). */
export const jobs: readonly JobDef[] = [...declared].sort((a, b) => rank(a) - rank(b));

export function jobByName(name: string): JobDef | undefined {
  return jobs.find((j) => j.name === name);
}
