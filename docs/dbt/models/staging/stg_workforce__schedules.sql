{{ config(materialized='view') }}

select
    company_key,
    schedule_id,
    schedule_name,
    _synced_at as synced_at,
    _extra as extra_fields
from {{ source('workforce', 'schedules') }}
where _deleted_at is null
