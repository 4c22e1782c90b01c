{{ config(materialized='view') }}

select
    company_key,
    form_id,
    form_title,
    _synced_at as synced_at,
    _extra as extra_fields
from {{ source('workforce', 'forms') }}
where _deleted_at is null
