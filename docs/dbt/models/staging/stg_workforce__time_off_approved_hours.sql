{{ config(materialized='view') }}

select
    company_key,
    time_off_request_key,
    _ord as position,
    approved_leave_policy,
    approved_leave_type,
    approved_hours,
    _synced_at as synced_at,
    _extra as extra_fields
from {{ source('workforce', 'time_off_approved_hours') }}
where _deleted_at is null
