import { ENVELOPE, PAGE_PARAMS, endpoint } from '../source/endpoints.ts';
import * as s from '../source/schemas/index.ts';
import type { ChildTarget, Target } from '../warehouse/targets.ts';
import { byId, defineStream, DAY_MS, FULL } from './stream.ts';

/** Forms: run-log forms, responses to generic and run-log forms with their answers, and the answers' audit. */

const envelope = ENVELOPE;

export const endpoints = {
  runLogForms: endpoint({
    name: 'runLogForms',
    method: 'GET',
    path: '/RunLogForm/GetList',
    query: [],
    response: { kind: 'array' },
    item: s.RunLogForm,
  }),
  formAudit: endpoint({
    name: 'formAudit',
    method: 'GET',
    path: '/RunLog/GetFormAuditList',
    query: [
      { name: 'FormId', type: 'int' },
      { name: 'StartDate', type: 'datetime', required: true },
      { name: 'EndDate', type: 'datetime', required: true },
      ...PAGE_PARAMS,
    ],
    response: envelope,
    item: s.FormAudit,
  }),
  formResponses: endpoint({
    name: 'formResponses',
    method: 'GET',
    path: '/FormResponse/GetList',
    query: [
      { name: 'FormId', type: 'int', required: true },
      { name: 'StartDate', type: 'date', required: true },
      { name: 'EndDate', type: 'date', required: true },
      { name: 'UpdatedSince', type: 'date' },
      ...PAGE_PARAMS,
    ],
    response: { kind: 'envelope', countField: 'Results', extras: ['FormId', 'FormTitle'] },
    item: s.FormResponse,
  }),
  runLogFormResponses: endpoint({
    name: 'runLogFormResponses',
    method: 'GET',
    path: '/RunLogFormResponse/GetList',
    query: [
      { name: 'RunTypeId', type: 'int', required: true },
      { name: 'FormType', type: 'enum', required: true, values: s.RUN_LOG_FORM_TYPES },
      { name: 'StartDate', type: 'datetime', required: true },
      { name: 'EndDate', type: 'datetime', required: true },
      { name: 'UpdatedSince', type: 'datetime' },
      ...PAGE_PARAMS,
    ],
    response: {
      kind: 'envelope',
      countField: 'Results',
      extras: ['RunLogTypeId', 'RunLogTypeName', 'RunLogFormType'],
    },
    item: s.RunLogFormResponse,
  }),
} as const;

const answers = (table: string): ChildTarget => ({ path: 'Answers', table, key: ['question_id'] });

/** Forms as the response list names them (FormId, FormTitle): written from each page's envelope. */
export const formsTarget: Target = byId('forms', 'forms', 'form_id');

const deletedResponses = [
  { name: 'all', everyHours: 24, reason: 'a deleted response leaves no updated record behind' },
];

export const streams = [
  defineStream({
    name: 'run-log-forms',
    endpoint: endpoints.runLogForms,
    target: byId('runLogForms', 'run_log_forms', 'form_id'),
    strategy: FULL,
  }),
  defineStream({
    name: 'form-responses',
    endpoint: endpoints.formResponses,
    target: {
      resource: 'formResponses',
      table: 'form_responses',
      key: ['response_id'],
      children: [answers('form_response_answers')],
      envelopeFields: ['FormId'],
      envelopeTarget: { target: formsTarget, fields: ['FormId', 'FormTitle'] },
      partitionColumns: { FormId: 'form_id' },
    },
    strategy: {
      kind: 'updated-since',
      param: 'UpdatedSince',
      precision: 'date',
      overlapMs: DAY_MS,
      range: { start: 'StartDate', end: 'EndDate', backDays: 3650, forwardDays: 366 },
      rereads: deletedResponses,
    },
    partitions: 'formIds',
  }),
  defineStream({
    name: 'run-log-form-responses',
    endpoint: endpoints.runLogFormResponses,
    target: {
      resource: 'runLogFormResponses',
      table: 'run_log_form_responses',
      key: ['response_id'],
      children: [
        answers('run_log_form_response_answers'),
        { path: 'RelatedRun.Crew', table: 'run_log_crew', key: ['_ord'] },
      ],
      envelopeFields: ['RunLogTypeId', 'RunLogTypeName', 'RunLogFormType'],
      partitionColumns: { RunTypeId: 'run_log_type_id', FormType: 'run_log_form_type' },
    },
    strategy: {
      kind: 'updated-since',
      param: 'UpdatedSince',
      precision: 'datetime',
      overlapMs: 60 * 60_000,
      range: { start: 'StartDate', end: 'EndDate', backDays: 3650, forwardDays: 366 },
      rereads: deletedResponses,
    },
    partitions: 'runTypes',
  }),
  defineStream({
    name: 'form-audit',
    endpoint: endpoints.formAudit,
    target: {
      resource: 'formAudit',
      table: 'form_audit',
      key: ['_key'],
      keyFields: ['ResponseId', 'ItemId', 'AnswerId', 'InsertDate', 'RunId'],
    },
    strategy: {
      kind: 'windowed',
      mode: 'append',
      start: 'StartDate',
      end: 'EndDate',
      sliceDays: 31,
      backfillDays: 400,
      forwardDays: 0,
      overlap: {
        ms: 60 * 60_000,
        reason:
          'audit rows are stamped when an answer is saved; one committed after a read that its stamp precedes is late by the length of a save, far under an hour; sync_runs.details.duplicates counts what the overlap absorbed',
      },
    },
  }),
] as const;
