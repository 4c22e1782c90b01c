{{ config(materialized='view') }}

select
    company_key,
    employment_service_id,
    _key as record_key,
    job_title_job_title_id,
    job_title_job_title_name,
    locale_locale_id,
    locale_locale_name,
    locale_business_unit_id,
    requirements_met as is_requirements_met,
    requirement,
    requirement_status,
    fulfilling_certification_certification_name,
    fulfilling_certification_certification_number,
    fulfilling_certification_activation_date,
    fulfilling_certification_expiration_date,
    fulfilling_certification_is_non_driver as is_fulfilling_certification_is_non_driver,
    _synced_at as synced_at,
    _extra as extra_fields,
    fulfilling_certification_activation_date_instant as fulfilling_certification_activation_at,
    fulfilling_certification_activation_date_utc_offset,
    fulfilling_certification_expiration_date_instant as fulfilling_certification_expiration_at,
    fulfilling_certification_expiration_date_utc_offset
from {{ source('workforce', 'required_certification_requirements') }}
where _deleted_at is null
