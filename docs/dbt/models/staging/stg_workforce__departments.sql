{{ config(materialized='view') }}

select
    company_key,
    department_id,
    department_name,
    _synced_at as synced_at,
    _extra as extra_fields
from {{ source('workforce', 'departments') }}
where _deleted_at is null
