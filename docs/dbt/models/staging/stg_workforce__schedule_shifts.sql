{{ config(materialized='view') }}

select
    company_key,
    schedule_id,
    shift_id,
    shift_name,
    _synced_at as synced_at,
    _extra as extra_fields
from {{ source('workforce', 'schedule_shifts') }}
where _deleted_at is null
