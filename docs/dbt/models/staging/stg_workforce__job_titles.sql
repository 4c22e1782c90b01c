{{ config(materialized='view') }}

select
    company_key,
    job_title_id,
    job_title_name,
    _synced_at as synced_at,
    _extra as extra_fields
from {{ source('workforce', 'job_titles') }}
where _deleted_at is null
