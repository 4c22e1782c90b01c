{{ config(materialized='view') }}

select
    company_key,
    form_id,
    form_type,
    archived as is_archived,
    insert_date as insert_at,
    update_date as update_at,
    _synced_at as synced_at,
    _extra as extra_fields
from {{ source('workforce', 'run_log_forms') }}
where _deleted_at is null
