{{ config(materialized='view') }}

select
    company_key,
    work_shift_id,
    work_shift_name,
    _synced_at as synced_at,
    _extra as extra_fields
from {{ source('workforce', 'work_shifts') }}
where _deleted_at is null
