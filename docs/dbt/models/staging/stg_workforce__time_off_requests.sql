{{ config(materialized='view') }}

select
    company_key,
    _key as record_key,
    employee_service_id,
    employee_employee_number,
    employee_first_name,
    employee_last_name,
    employee_unique_identifier,
    start_date_time as start_at,
    end_date_time as end_at,
    requested_leave_policy,
    requested_leave_type,
    requested_date_time as requested_at,
    status,
    reviewed_by_service_id,
    reviewed_by_employee_number,
    reviewed_by_first_name,
    reviewed_by_last_name,
    reviewed_by_unique_identifier,
    reviewed_date_time as reviewed_at,
    requested_hours,
    _synced_at as synced_at,
    _extra as extra_fields,
    start_date_time_local_date,
    start_date_time_utc_offset,
    end_date_time_local_date,
    end_date_time_utc_offset
from {{ source('workforce', 'time_off_requests') }}
where _deleted_at is null
