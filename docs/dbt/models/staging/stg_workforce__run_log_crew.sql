{{ config(materialized='view') }}

select
    company_key,
    response_id,
    _ord as position,
    crew_role,
    service_id,
    employee_number,
    first_name,
    last_name,
    _synced_at as synced_at,
    _extra as extra_fields
from {{ source('workforce', 'run_log_crew') }}
where _deleted_at is null
