import type { JobDef } from '../src/queue/job.ts';
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

/** Every scheduled job, in the order a first sync runs them; housekeeping reads no stream. */
export const jobs: readonly JobDef[] = [
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
];

export function jobByName(name: string): JobDef | undefined {
  return jobs.find((j) => j.name === name);
}
