import { z } from 'zod';
import { EMPLOYEE_FILTERS, ENVELOPE, PAGE_PARAMS, endpoint } from '../source/endpoints.ts';
import * as s from '../source/schemas/index.ts';
import type { Target } from '../warehouse/targets.ts';
import { byId, DAY_MS, defineStream } from './stream.ts';

/** Credentials: the ones individuals hold, those pending verification, the required ones' status; their writes. */

const employeeFilters = EMPLOYEE_FILTERS;
const envelope = ENVELOPE;

export const endpoints = {
  individualCertifications: endpoint({
    name: 'individualCertifications',
    method: 'GET',
    path: '/IndividualCertification/GetIndividualCertificationList',
    query: [
      { name: 'primaryOnly', type: 'bool' },
      { name: 'updatedSince', type: 'date' },
      ...employeeFilters,
      { name: 'IncludeDeleted', type: 'bool', default: false },
      ...PAGE_PARAMS,
    ],
    response: envelope,
    item: s.IndividualCertification,
    scope: 'certifications',
    earlier: 'certification',
  }),
  pendingCertifications: endpoint({
    name: 'pendingCertifications',
    method: 'GET',
    path: '/IndividualCertification/GetIndividualCertificationPendingList',
    query: [...PAGE_PARAMS],
    response: envelope,
    item: s.PendingCertification,
    scope: 'certifications',
  }),
  certificationInsert: endpoint({
    name: 'certificationInsert',
    method: 'POST',
    path: '/IndividualCertification/Insert',
    query: [],
    response: { kind: 'one' },
    item: s.IndividualCertification,
    body: s.IndividualCertificationInsert,
    status: 200,
    resend: 'check-first',
    lane: 'push',
    scope: 'certifications',
  }),
  certificationUpdate: endpoint({
    name: 'certificationUpdate',
    method: 'POST',
    path: '/IndividualCertification/Update',
    query: [],
    response: { kind: 'one' },
    item: s.IndividualCertification,
    body: s.IndividualCertificationUpdate,
    status: 200,
    resend: 'blind',
    lane: 'push',
    scope: 'certifications',
  }),
  requiredCertificationStatus: endpoint({
    name: 'requiredCertificationStatus',
    method: 'GET',
    path: '/IndividualCertification/GetRequiredCertificationStatus',
    query: [...employeeFilters, ...PAGE_PARAMS],
    response: envelope,
    item: s.EmployeeRequiredCredentialStatus,
    scope: 'certifications',
  }),
  validateSubmission: endpoint({
    name: 'validateSubmission',
    method: 'POST',
    path: '/IndividualCertification/ValidateSubmission',
    query: [],
    response: { kind: 'empty' },
    item: z.unknown(),
    body: z.array(s.VerificationSubmissionItem).min(1, 'at least one verification result is required'),
    status: 201,
    // Each result carries its RequestId, and the service keeps one result per RequestId.
    resend: 'blind',
    lane: 'push',
    scope: 'certifications',
  }),
} as const;

export const individualCertificationsTarget: Target = {
  resource: 'individualCertifications',
  table: 'individual_certifications',
  key: ['individual_certification_id'],
  history: 'individual_certifications_history',
  deletedFlag: 'IsDeleted',
};

export const streams = [
  defineStream({
    name: 'individual-certifications',
    endpoint: endpoints.individualCertifications,
    target: individualCertificationsTarget,
    strategy: {
      kind: 'updated-since',
      param: 'updatedSince',
      precision: 'date',
      overlapMs: DAY_MS,
      followIndividuals: {
        param: 'ServiceId',
        column: 'service_id',
        statuses: ['Active', 'LOA'],
        copies: {
          first_name: 'first_name',
          last_name: 'last_name',
          legal_first_name: 'legal_first_name',
          legal_middle_name: 'legal_middle_name',
          legal_last_name: 'legal_last_name',
          unique_identifier: 'unique_number',
          job_title_id: 'job_title_id',
          job_title: 'job_title',
        },
        jobTitles: 'additional_job_titles',
        // A credential's business unit comes from its holder's locale, and whether it is primary from the
        // requirements of the holder's job title and locale.
        derivedFrom: ['locale', 'job_title_id'],
      },
      // The weekly full read is its own job (credentials-full-refresh).
    },
    fixed: { IncludeDeleted: true },
    dependsOn: ['individuals'],
  }),
  defineStream({
    name: 'pending-certifications',
    endpoint: endpoints.pendingCertifications,
    target: byId('pendingCertifications', 'pending_certifications', 'individual_certification_id'),
    strategy: { kind: 'snapshot' },
  }),
  defineStream({
    name: 'required-certification-status',
    endpoint: endpoints.requiredCertificationStatus,
    target: {
      resource: 'requiredCertificationStatus',
      table: 'required_certification_status',
      key: ['employment_service_id'],
      children: [
        {
          path: 'CredentialRequirements',
          each: 'Requirements',
          table: 'required_certification_requirements',
          key: ['_key'],
          keyFields: ['JobTitle.JobTitleId', 'Locale.LocaleId', 'Requirement'],
        },
      ],
    },
    strategy: {
      kind: 'snapshot',
      followEmployees: { param: 'ServiceId', column: 'employment_service_id' },
      rereads: [
        {
          name: 'all',
          everyHours: 24,
          reason:
            'requirement rules, certification names and anything else not on an individual or a credential carry no signal',
        },
      ],
    },
  }),
] as const;
