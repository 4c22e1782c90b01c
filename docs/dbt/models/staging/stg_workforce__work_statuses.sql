{{ config(materialized='view') }}

select
    company_key,
    work_status_id,
    work_status_name,
    _synced_at as synced_at,
    _extra as extra_fields
from {{ source('workforce', 'work_statuses') }}
where _deleted_at is null
