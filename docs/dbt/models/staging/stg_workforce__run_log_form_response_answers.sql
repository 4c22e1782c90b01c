{{ config(materialized='view') }}

select
    company_key,
    response_id,
    question_id,
    question_type,
    question_text,
    question_alias,
    page_number,
    section_name,
    answer_value,
    answer_value_matches_type as is_answer_value_matches_type,
    _synced_at as synced_at,
    _extra as extra_fields
from {{ source('workforce', 'run_log_form_response_answers') }}
where _deleted_at is null
