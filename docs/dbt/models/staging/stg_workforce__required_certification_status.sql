{{ config(materialized='view') }}

select
    company_key,
    employment_service_id,
    employment_unique_identifier,
    employment_employee_number,
    employment_first_name,
    employment_last_name,
    employment_legal_first_name,
    employment_legal_middle_name,
    employment_legal_last_name,
    _synced_at as synced_at,
    _extra as extra_fields
from {{ source('workforce', 'required_certification_status') }}
where _deleted_at is null
