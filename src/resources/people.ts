import { z } from 'zod';
import { endpoint, type QueryParam } from '../source/endpoints.ts';
import * as s from '../source/schemas/index.ts';
import { byId, defineStream, FULL } from './stream.ts';
import type { Target } from '../warehouse/targets.ts';

/** People: individuals and supervisors, read whole each run; the lookups and writes the push job sends. */

const STATUSES = s.INDIVIDUAL_STATUSES;

/** One individual looked up by one of its keys (the push job's check before a write). */
const individualBy = <const P extends QueryParam>(name: string, path: string, param: P) =>
  endpoint({
    name,
    method: 'GET',
    path,
    query: [param],
    response: { kind: 'one' },
    item: s.Individual,
    scope: 'individuals',
    earlier: 'individual',
  });

export const endpoints = {
  individuals: endpoint({
    name: 'individuals',
    method: 'GET',
    path: '/Individual/GetList',
    query: [{ name: 'ExcludeStatuses', type: 'csv', values: STATUSES }],
    response: { kind: 'array' },
    item: s.Individual,
    scope: 'individuals',
    earlier: 'individual',
  }),
  supervisors: endpoint({
    name: 'supervisors',
    method: 'GET',
    path: '/Individual/GetSupervisorList',
    query: [],
    response: { kind: 'array' },
    item: s.Supervisor,
    scope: 'individuals',
  }),
  individualByServiceId: individualBy('individualByServiceId', '/Individual/GetByServiceId', {
    name: 'serviceId',
    type: 'int',
    required: true,
  }),
  individualByUniqueIdentifier: individualBy('individualByUniqueIdentifier', '/Individual/GetByUniqueIdentifier', {
    name: 'uniqueIdentifier',
    type: 'string',
    required: true,
  }),
  individualByEmployeeNumber: individualBy('individualByEmployeeNumber', '/Individual/GetByEmployeeNumber', {
    name: 'employeeNumber',
    type: 'string',
    required: true,
  }),
  individualExists: endpoint({
    name: 'individualExists',
    method: 'GET',
    path: '/Individual/Exists',
    query: [{ name: 'uniqueIdentifier', type: 'string', required: true }],
    response: { kind: 'boolean' },
    item: z.boolean(),
    scope: 'individuals',
  }),
  individualInsert: endpoint({
    name: 'individualInsert',
    method: 'POST',
    path: '/Individual/Insert',
    query: [],
    response: { kind: 'one' },
    item: s.Individual,
    body: s.IndividualInsert,
    status: 201,
    resend: 'check-first',
    lane: 'push',
    scope: 'individuals',
    earlier: 'individual',
  }),
  individualUpdate: endpoint({
    name: 'individualUpdate',
    method: 'POST',
    path: '/Individual/Update',
    query: [],
    response: { kind: 'one' },
    item: s.Individual,
    body: s.IndividualUpdate,
    status: 200,
    resend: 'blind',
    lane: 'push',
    scope: 'individuals',
    earlier: 'individual',
  }),
} as const;

/** An individual's additional job titles, a child table of individuals (and repeated on their credentials). */
const jobTitles = { path: 'AdditionalJobTitles', table: 'individual_job_titles', key: ['job_title_id'] } as const;

export const individualsTarget: Target = {
  resource: 'individuals',
  table: 'individuals',
  key: ['service_id'],
  children: [jobTitles],
  history: 'individuals_history',
};

export const streams = [
  defineStream({ name: 'individuals', endpoint: endpoints.individuals, target: individualsTarget, strategy: FULL }),
  defineStream({
    name: 'supervisors',
    endpoint: endpoints.supervisors,
    target: byId('supervisors', 'supervisors', 'service_id'),
    strategy: FULL,
  }),
] as const;
