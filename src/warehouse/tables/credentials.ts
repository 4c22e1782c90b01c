import { boolean, index, integer, jsonb, primaryKey, text, type PgSchema } from 'drizzle-orm/pg-core';
import { companyKey, history, legalNames, localDay, synced, syncedParent } from './columns.ts';

/** What a credential says of itself, in the individual certification list and the pending list alike. */
const credentialDetails = () => ({
  job_title_id: integer(),
  job_title: text(),
  additional_job_titles: jsonb(),
  certification_id: integer(),
  certification_name: text(),
  certification_number: text(),
  state: text(),
  country: text(),
  ...localDay('activation_date'),
  ...localDay('expiration_date'),
  reference: text(),
  ...localDay('update_date'),
});

const certificationColumns = () => ({
  company_key: companyKey(),
  individual_certification_id: integer().notNull(),
  service_id: integer(),
  first_name: text(),
  last_name: text(),
  ...legalNames(),
  unique_identifier: text(),
  business_unit_id: text(),
  ...credentialDetails(),
  update_by: text(),
  is_maintained: boolean(),
  is_deleted: boolean(),
  issuing_body: text(),
  is_primary: boolean(),
  is_non_driver: boolean(),
});

/** Individual certifications and their history, pending certifications, required-certification status. */
export const credentialTables = (s: PgSchema) => ({
  individualCertifications: s.table(
    'individual_certifications',
    { ...certificationColumns(), ...syncedParent() },
    (t) => [
      primaryKey({ columns: [t.company_key, t.individual_certification_id] }),
      index().on(t.service_id, t.company_key),
      index().on(t.expiration_date, t.company_key),
    ],
  ),
  individualCertificationsHistory: s.table(
    'individual_certifications_history',
    { ...certificationColumns(), _extra: jsonb(), _hash: text().notNull(), ...history() },
    (t) => [
      primaryKey({ columns: [t.company_key, t.individual_certification_id, t.valid_from] }),
      index('individual_certifications_history_service_idx').on(t.service_id, t.company_key, t.valid_from),
    ],
  ),
  pendingCertifications: s.table(
    'pending_certifications',
    {
      company_key: companyKey(),
      individual_certification_id: integer().notNull(),
      service_id: integer(),
      first_name: text(),
      last_name: text(),
      ...legalNames(),
      ...credentialDetails(),
      is_maintained: boolean(),
      is_non_driver: boolean(),
      verification_status: text(),
      issuing_body_failure_reason: jsonb(),
      ...syncedParent(),
    },
    (t) => [primaryKey({ columns: [t.company_key, t.individual_certification_id] })],
  ),
  requiredCertificationStatus: s.table(
    'required_certification_status',
    {
      company_key: companyKey(),
      employment_service_id: integer().notNull(),
      employment_unique_identifier: text(),
      employment_employee_number: text(),
      employment_first_name: text(),
      employment_last_name: text(),
      ...legalNames('employment_'),
      ...syncedParent(),
    },
    (t) => [primaryKey({ columns: [t.company_key, t.employment_service_id] })],
  ),
  requiredCertificationRequirements: s.table(
    'required_certification_requirements',
    {
      company_key: companyKey(),
      employment_service_id: integer().notNull(),
      _key: text().notNull(),
      job_title_job_title_id: integer(),
      job_title_job_title_name: text(),
      locale_locale_id: integer(),
      locale_locale_name: text(),
      locale_business_unit_id: text(),
      requirements_met: boolean(),
      requirement: text(),
      requirement_status: text(),
      fulfilling_certification_certification_name: text(),
      fulfilling_certification_certification_number: text(),
      ...localDay('fulfilling_certification_activation_date'),
      ...localDay('fulfilling_certification_expiration_date'),
      fulfilling_certification_is_non_driver: boolean(),
      ...synced(),
    },
    (t) => [
      primaryKey({ columns: [t.company_key, t.employment_service_id, t._key] }),
      index('required_certification_requirements_job_title_idx').on(t.job_title_job_title_id, t.company_key),
    ],
  ),
});
