{{ config(materialized='view') }}

select
    company_key,
    locale_id,
    locale_name,
    _synced_at as synced_at,
    _extra as extra_fields
from {{ source('workforce', 'locales') }}
where _deleted_at is null
