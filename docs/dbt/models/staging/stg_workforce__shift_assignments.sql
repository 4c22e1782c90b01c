{{ config(materialized='view') }}

select
    company_key,
    shift_assignment_id,
    schedule_id,
    schedule_name,
    shift_id,
    shift_name,
    job_title_id,
    job_title_name,
    start_date_time as start_at,
    end_date_time as end_at,
    type,
    assignee_service_id,
    assignee_employee_number,
    assignee_first_name,
    assignee_last_name,
    vehicle_name,
    clock_in_date_time as clock_in_at,
    clock_out_date_time as clock_out_at,
    _synced_at as synced_at,
    _extra as extra_fields,
    start_date_time_local_date,
    start_date_time_utc_offset,
    end_date_time_local_date,
    end_date_time_utc_offset,
    clock_in_date_time_local_date,
    clock_in_date_time_utc_offset,
    clock_out_date_time_local_date,
    clock_out_date_time_utc_offset
from {{ source('workforce', 'shift_assignments') }}
where _deleted_at is null
