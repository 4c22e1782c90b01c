{{ config(materialized='view') }}

select
    company_key,
    certification_id,
    certification_name,
    _synced_at as synced_at,
    _extra as extra_fields
from {{ source('workforce', 'certifications') }}
where _deleted_at is null
