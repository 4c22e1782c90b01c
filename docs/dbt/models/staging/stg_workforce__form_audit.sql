{{ config(materialized='view') }}

select
    company_key,
    _key as record_key,
    response_id,
    run_id,
    item_id,
    answer_id,
    answer_text,
    other_text,
    answer_date as answer_at,
    item_text,
    page_number,
    section_number,
    order_number,
    audit_individual_unique_identifier,
    audit_individual_first_name,
    audit_individual_last_name,
    insert_date as insert_at,
    _synced_at as synced_at,
    _extra as extra_fields,
    answer_date_local_date,
    answer_date_utc_offset,
    insert_date_local_date,
    insert_date_utc_offset
from {{ source('workforce', 'form_audit') }}
where _deleted_at is null
