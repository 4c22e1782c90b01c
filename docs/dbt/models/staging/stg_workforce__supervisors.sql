{{ config(materialized='view') }}

select
    company_key,
    service_id,
    individual_id,
    first_name,
    middle_name,
    last_name,
    is_employee,
    is_supervisor,
    status,
    _synced_at as synced_at,
    _extra as extra_fields
from {{ source('workforce', 'supervisors') }}
where _deleted_at is null
