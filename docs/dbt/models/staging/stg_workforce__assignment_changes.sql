{{ config(materialized='view') }}

select
    company_key,
    _key as record_key,
    event_type,
    event_time_stamp as event_at,
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
    _synced_at as synced_at,
    _extra as extra_fields,
    start_date_time_local_date,
    start_date_time_utc_offset,
    end_date_time_local_date,
    end_date_time_utc_offset
from {{ source('workforce', 'assignment_changes') }}
where _deleted_at is null
