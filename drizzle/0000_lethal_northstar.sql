CREATE SCHEMA "workforce";
--> statement-breakpoint
CREATE TABLE "workforce"."assignment_changes" (
	"company_key" text NOT NULL,
	"_key" text NOT NULL,
	"event_type" text,
	"event_time_stamp" timestamp with time zone,
	"shift_assignment_id" integer NOT NULL,
	"schedule_id" integer,
	"schedule_name" text,
	"shift_id" integer,
	"shift_name" text,
	"job_title_id" integer,
	"job_title_name" text,
	"start_date_time" timestamp with time zone,
	"end_date_time" timestamp with time zone,
	"type" text,
	"assignee_service_id" integer,
	"assignee_employee_number" text,
	"assignee_first_name" text,
	"assignee_last_name" text,
	"_synced_at" timestamp with time zone NOT NULL,
	"_deleted_at" timestamp with time zone,
	"_extra" jsonb,
	"_hash" text NOT NULL,
	CONSTRAINT "assignment_changes_company_key__key_pk" PRIMARY KEY("company_key","_key")
);
--> statement-breakpoint
CREATE TABLE "workforce"."certifications" (
	"company_key" text NOT NULL,
	"certification_id" integer NOT NULL,
	"certification_name" text,
	"_synced_at" timestamp with time zone NOT NULL,
	"_deleted_at" timestamp with time zone,
	"_extra" jsonb,
	"_hash" text NOT NULL,
	CONSTRAINT "certifications_company_key_certification_id_pk" PRIMARY KEY("company_key","certification_id")
);
--> statement-breakpoint
CREATE TABLE "workforce"."departments" (
	"company_key" text NOT NULL,
	"department_id" integer NOT NULL,
	"department_name" text,
	"_synced_at" timestamp with time zone NOT NULL,
	"_deleted_at" timestamp with time zone,
	"_extra" jsonb,
	"_hash" text NOT NULL,
	CONSTRAINT "departments_company_key_department_id_pk" PRIMARY KEY("company_key","department_id")
);
--> statement-breakpoint
CREATE TABLE "workforce"."form_audit" (
	"company_key" text NOT NULL,
	"_key" text NOT NULL,
	"response_id" integer,
	"run_id" text,
	"item_id" integer,
	"answer_id" integer,
	"answer_text" text,
	"other_text" text,
	"answer_date" timestamp with time zone,
	"item_text" text,
	"page_number" integer,
	"section_number" integer,
	"order_number" integer,
	"audit_individual_unique_identifier" text,
	"audit_individual_first_name" text,
	"audit_individual_last_name" text,
	"insert_date" timestamp with time zone,
	"_synced_at" timestamp with time zone NOT NULL,
	"_deleted_at" timestamp with time zone,
	"_extra" jsonb,
	"_hash" text NOT NULL,
	CONSTRAINT "form_audit_company_key__key_pk" PRIMARY KEY("company_key","_key")
);
--> statement-breakpoint
CREATE TABLE "workforce"."form_response_answers" (
	"company_key" text NOT NULL,
	"response_id" integer NOT NULL,
	"question_id" integer NOT NULL,
	"question_type" text,
	"question_text" text,
	"question_alias" text,
	"page_number" integer,
	"section_name" text,
	"answer_value" jsonb,
	"answer_value_matches_type" boolean,
	"_synced_at" timestamp with time zone NOT NULL,
	"_deleted_at" timestamp with time zone,
	"_extra" jsonb,
	CONSTRAINT "form_response_answers_company_key_response_id_question_id_pk" PRIMARY KEY("company_key","response_id","question_id")
);
--> statement-breakpoint
CREATE TABLE "workforce"."form_responses" (
	"company_key" text NOT NULL,
	"response_id" integer NOT NULL,
	"submitted_by_service_id" integer,
	"submitted_by_employee_number" text,
	"submitted_by_first_name" text,
	"submitted_by_last_name" text,
	"start_date" timestamp with time zone,
	"assigned_to_service_id" integer,
	"assigned_to_employee_number" text,
	"assigned_to_first_name" text,
	"assigned_to_last_name" text,
	"status" text,
	"attached_to_type" text,
	"form_id" integer,
	"related_individual_service_id" integer,
	"related_individual_employee_number" text,
	"related_individual_first_name" text,
	"related_individual_last_name" text,
	"related_employee_health_event_health_event_id" integer,
	"related_employee_health_event_health_event_type" text,
	"related_employee_health_event_event_date_time" timestamp with time zone,
	"related_employee_health_event_related_individual_service_id" integer,
	"related_employee_health_event_related_individual_employee_number" text,
	"related_employee_health_event_related_individual_first_name" text,
	"related_employee_health_event_related_individual_last_name" text,
	"related_quality_improvement_incident_incident_id" integer,
	"related_quality_improvement_incident_incident_type" text,
	"related_quality_improvement_incident_incident_date_time" timestamp with time zone,
	"related_shift_shift_name" text,
	"related_shift_shift_date" timestamp with time zone,
	"_synced_at" timestamp with time zone NOT NULL,
	"_deleted_at" timestamp with time zone,
	"_extra" jsonb,
	"_hash" text NOT NULL,
	CONSTRAINT "form_responses_company_key_response_id_pk" PRIMARY KEY("company_key","response_id")
);
--> statement-breakpoint
CREATE TABLE "workforce"."forms" (
	"company_key" text NOT NULL,
	"form_id" integer NOT NULL,
	"form_title" text,
	"_synced_at" timestamp with time zone NOT NULL,
	"_deleted_at" timestamp with time zone,
	"_extra" jsonb,
	"_hash" text NOT NULL,
	CONSTRAINT "forms_company_key_form_id_pk" PRIMARY KEY("company_key","form_id")
);
--> statement-breakpoint
CREATE TABLE "workforce"."individual_certifications" (
	"company_key" text NOT NULL,
	"individual_certification_id" integer NOT NULL,
	"service_id" integer,
	"first_name" text,
	"last_name" text,
	"legal_first_name" text,
	"legal_middle_name" text,
	"legal_last_name" text,
	"unique_identifier" text,
	"business_unit_id" text,
	"job_title_id" integer,
	"job_title" text,
	"additional_job_titles" jsonb,
	"certification_id" integer,
	"certification_name" text,
	"certification_number" text,
	"state" text,
	"country" text,
	"activation_date" date,
	"expiration_date" date,
	"reference" text,
	"update_date" date,
	"update_by" text,
	"is_maintained" boolean,
	"is_deleted" boolean,
	"issuing_body" text,
	"is_primary" boolean,
	"is_non_driver" boolean,
	"_synced_at" timestamp with time zone NOT NULL,
	"_deleted_at" timestamp with time zone,
	"_extra" jsonb,
	"_hash" text NOT NULL,
	CONSTRAINT "individual_certifications_company_key_individual_certification_id_pk" PRIMARY KEY("company_key","individual_certification_id")
);
--> statement-breakpoint
CREATE TABLE "workforce"."individual_certifications_history" (
	"company_key" text NOT NULL,
	"individual_certification_id" integer NOT NULL,
	"service_id" integer,
	"first_name" text,
	"last_name" text,
	"legal_first_name" text,
	"legal_middle_name" text,
	"legal_last_name" text,
	"unique_identifier" text,
	"business_unit_id" text,
	"job_title_id" integer,
	"job_title" text,
	"additional_job_titles" jsonb,
	"certification_id" integer,
	"certification_name" text,
	"certification_number" text,
	"state" text,
	"country" text,
	"activation_date" date,
	"expiration_date" date,
	"reference" text,
	"update_date" date,
	"update_by" text,
	"is_maintained" boolean,
	"is_deleted" boolean,
	"issuing_body" text,
	"is_primary" boolean,
	"is_non_driver" boolean,
	"_extra" jsonb,
	"_hash" text NOT NULL,
	"valid_from" timestamp with time zone NOT NULL,
	"valid_to" timestamp with time zone,
	CONSTRAINT "individual_certifications_history_company_key_individual_certification_id_valid_from_pk" PRIMARY KEY("company_key","individual_certification_id","valid_from")
);
--> statement-breakpoint
CREATE TABLE "workforce"."individual_courses" (
	"company_key" text NOT NULL,
	"individual_course_id" text NOT NULL,
	"course_name" text,
	"course_description" text,
	"credit" numeric,
	"start_date" date,
	"end_date" date,
	"first_name" text,
	"middle_name" text,
	"last_name" text,
	"individual_id" integer,
	"employee_number" text,
	"department" text,
	"locale" text,
	"job_title" text,
	"author_instructor" text,
	"status" text,
	"course_id" integer,
	"exam_start_date" date,
	"exam_end_date" date,
	"_synced_at" timestamp with time zone NOT NULL,
	"_deleted_at" timestamp with time zone,
	"_extra" jsonb,
	"_hash" text NOT NULL,
	CONSTRAINT "individual_courses_company_key_individual_course_id_pk" PRIMARY KEY("company_key","individual_course_id")
);
--> statement-breakpoint
CREATE TABLE "workforce"."individual_job_titles" (
	"company_key" text NOT NULL,
	"service_id" integer NOT NULL,
	"job_title_id" integer NOT NULL,
	"job_title_name" text,
	"_synced_at" timestamp with time zone NOT NULL,
	"_deleted_at" timestamp with time zone,
	"_extra" jsonb,
	CONSTRAINT "individual_job_titles_company_key_service_id_job_title_id_pk" PRIMARY KEY("company_key","service_id","job_title_id")
);
--> statement-breakpoint
CREATE TABLE "workforce"."individuals" (
	"company_key" text NOT NULL,
	"individual_id" integer,
	"service_id" integer NOT NULL,
	"company_id" integer,
	"first_name" text,
	"middle_name" text,
	"last_name" text,
	"legal_first_name" text,
	"legal_middle_name" text,
	"legal_last_name" text,
	"employee_number" text,
	"unique_number" text,
	"logon_id" text,
	"date_of_birth" date,
	"hire_date" date,
	"gender" text,
	"job_title_id" integer,
	"job_title" text,
	"department" text,
	"locale" text,
	"work_shift" text,
	"is_employee" integer,
	"is_supervisor" integer,
	"work_status" text,
	"status" text,
	"supervisor_id" integer,
	"supervisor_name" text,
	"primary_email_address" text,
	"home_address_line1" text,
	"home_address_line2" text,
	"home_city" text,
	"home_state" text,
	"home_country" text,
	"home_zip_code" text,
	"home_phone_number" text,
	"business_phone_number" text,
	"mobile_phone_number" text,
	"exclude_from_verification_monitoring" boolean,
	"_synced_at" timestamp with time zone NOT NULL,
	"_deleted_at" timestamp with time zone,
	"_extra" jsonb,
	"_hash" text NOT NULL,
	CONSTRAINT "individuals_company_key_service_id_pk" PRIMARY KEY("company_key","service_id")
);
--> statement-breakpoint
CREATE TABLE "workforce"."individuals_history" (
	"company_key" text NOT NULL,
	"individual_id" integer,
	"service_id" integer NOT NULL,
	"company_id" integer,
	"first_name" text,
	"middle_name" text,
	"last_name" text,
	"legal_first_name" text,
	"legal_middle_name" text,
	"legal_last_name" text,
	"employee_number" text,
	"unique_number" text,
	"logon_id" text,
	"date_of_birth" date,
	"hire_date" date,
	"gender" text,
	"job_title_id" integer,
	"job_title" text,
	"department" text,
	"locale" text,
	"work_shift" text,
	"is_employee" integer,
	"is_supervisor" integer,
	"work_status" text,
	"status" text,
	"supervisor_id" integer,
	"supervisor_name" text,
	"primary_email_address" text,
	"home_address_line1" text,
	"home_address_line2" text,
	"home_city" text,
	"home_state" text,
	"home_country" text,
	"home_zip_code" text,
	"home_phone_number" text,
	"business_phone_number" text,
	"mobile_phone_number" text,
	"exclude_from_verification_monitoring" boolean,
	"_extra" jsonb,
	"_hash" text NOT NULL,
	"valid_from" timestamp with time zone NOT NULL,
	"valid_to" timestamp with time zone,
	CONSTRAINT "individuals_history_company_key_service_id_valid_from_pk" PRIMARY KEY("company_key","service_id","valid_from")
);
--> statement-breakpoint
CREATE TABLE "workforce"."job_titles" (
	"company_key" text NOT NULL,
	"job_title_id" integer NOT NULL,
	"job_title_name" text,
	"_synced_at" timestamp with time zone NOT NULL,
	"_deleted_at" timestamp with time zone,
	"_extra" jsonb,
	"_hash" text NOT NULL,
	CONSTRAINT "job_titles_company_key_job_title_id_pk" PRIMARY KEY("company_key","job_title_id")
);
--> statement-breakpoint
CREATE TABLE "workforce"."locales" (
	"company_key" text NOT NULL,
	"locale_id" integer NOT NULL,
	"locale_name" text,
	"_synced_at" timestamp with time zone NOT NULL,
	"_deleted_at" timestamp with time zone,
	"_extra" jsonb,
	"_hash" text NOT NULL,
	CONSTRAINT "locales_company_key_locale_id_pk" PRIMARY KEY("company_key","locale_id")
);
--> statement-breakpoint
CREATE TABLE "workforce"."pending_certifications" (
	"company_key" text NOT NULL,
	"individual_certification_id" integer NOT NULL,
	"service_id" integer,
	"first_name" text,
	"last_name" text,
	"legal_first_name" text,
	"legal_middle_name" text,
	"legal_last_name" text,
	"job_title_id" integer,
	"job_title" text,
	"additional_job_titles" jsonb,
	"certification_id" integer,
	"certification_name" text,
	"certification_number" text,
	"state" text,
	"country" text,
	"activation_date" date,
	"expiration_date" date,
	"reference" text,
	"update_date" date,
	"is_maintained" boolean,
	"is_non_driver" boolean,
	"verification_status" text,
	"issuing_body_failure_reason" jsonb,
	"_synced_at" timestamp with time zone NOT NULL,
	"_deleted_at" timestamp with time zone,
	"_extra" jsonb,
	"_hash" text NOT NULL,
	CONSTRAINT "pending_certifications_company_key_individual_certification_id_pk" PRIMARY KEY("company_key","individual_certification_id")
);
--> statement-breakpoint
CREATE TABLE "workforce"."push_outbox" (
	"id" bigint PRIMARY KEY GENERATED ALWAYS AS IDENTITY (sequence name "workforce"."push_outbox_id_seq" INCREMENT BY 1 MINVALUE 1 MAXVALUE 9223372036854775807 START WITH 1 CACHE 1),
	"company_key" text NOT NULL,
	"kind" text NOT NULL,
	"payload" jsonb NOT NULL,
	"sealed" text,
	"status" text DEFAULT 'pending' NOT NULL,
	"attempts" integer DEFAULT 0 NOT NULL,
	"error" text,
	"created_at" timestamp with time zone DEFAULT now() NOT NULL,
	"updated_at" timestamp with time zone DEFAULT now() NOT NULL,
	CONSTRAINT "push_outbox_payload_without_ssn" CHECK (not jsonb_path_exists("workforce"."push_outbox"."payload", 'lax $.**.keyvalue() ? (@.key like_regex "^ssn$" flag "i")', '{}', true))
);
--> statement-breakpoint
CREATE TABLE "workforce"."required_certification_requirements" (
	"company_key" text NOT NULL,
	"employment_service_id" integer NOT NULL,
	"_key" text NOT NULL,
	"job_title_job_title_id" integer,
	"job_title_job_title_name" text,
	"locale_locale_id" integer,
	"locale_locale_name" text,
	"locale_business_unit_id" text,
	"requirements_met" boolean,
	"requirement" text,
	"requirement_status" text,
	"fulfilling_certification_certification_name" text,
	"fulfilling_certification_certification_number" text,
	"fulfilling_certification_activation_date" date,
	"fulfilling_certification_expiration_date" date,
	"fulfilling_certification_is_non_driver" boolean,
	"_synced_at" timestamp with time zone NOT NULL,
	"_deleted_at" timestamp with time zone,
	"_extra" jsonb,
	CONSTRAINT "required_certification_requirements_company_key_employment_service_id__key_pk" PRIMARY KEY("company_key","employment_service_id","_key")
);
--> statement-breakpoint
CREATE TABLE "workforce"."required_certification_status" (
	"company_key" text NOT NULL,
	"employment_service_id" integer NOT NULL,
	"employment_unique_identifier" text,
	"employment_employee_number" text,
	"employment_first_name" text,
	"employment_last_name" text,
	"employment_legal_first_name" text,
	"employment_legal_middle_name" text,
	"employment_legal_last_name" text,
	"_synced_at" timestamp with time zone NOT NULL,
	"_deleted_at" timestamp with time zone,
	"_extra" jsonb,
	"_hash" text NOT NULL,
	CONSTRAINT "required_certification_status_company_key_employment_service_id_pk" PRIMARY KEY("company_key","employment_service_id")
);
--> statement-breakpoint
CREATE TABLE "workforce"."run_log_crew" (
	"company_key" text NOT NULL,
	"response_id" integer NOT NULL,
	"_ord" integer NOT NULL,
	"crew_role" text,
	"service_id" integer,
	"employee_number" text,
	"first_name" text,
	"last_name" text,
	"_synced_at" timestamp with time zone NOT NULL,
	"_deleted_at" timestamp with time zone,
	"_extra" jsonb,
	CONSTRAINT "run_log_crew_company_key_response_id__ord_pk" PRIMARY KEY("company_key","response_id","_ord")
);
--> statement-breakpoint
CREATE TABLE "workforce"."run_log_form_response_answers" (
	"company_key" text NOT NULL,
	"response_id" integer NOT NULL,
	"question_id" integer NOT NULL,
	"question_type" text,
	"question_text" text,
	"question_alias" text,
	"page_number" integer,
	"section_name" text,
	"answer_value" jsonb,
	"answer_value_matches_type" boolean,
	"_synced_at" timestamp with time zone NOT NULL,
	"_deleted_at" timestamp with time zone,
	"_extra" jsonb,
	CONSTRAINT "run_log_form_response_answers_company_key_response_id_question_id_pk" PRIMARY KEY("company_key","response_id","question_id")
);
--> statement-breakpoint
CREATE TABLE "workforce"."run_log_form_responses" (
	"company_key" text NOT NULL,
	"response_id" integer NOT NULL,
	"submitted_by_service_id" integer,
	"submitted_by_employee_number" text,
	"submitted_by_first_name" text,
	"submitted_by_last_name" text,
	"start_date" timestamp with time zone,
	"assigned_to_service_id" integer,
	"assigned_to_employee_number" text,
	"assigned_to_first_name" text,
	"assigned_to_last_name" text,
	"status" text,
	"attached_to_type" text,
	"run_log_type_id" integer,
	"run_log_type_name" text,
	"run_log_form_type" text,
	"related_run_run_id" text,
	"related_run_run_type" text,
	"related_run_run_category" text,
	"related_run_run_date_time" timestamp with time zone,
	"related_run_started_by_service_id" integer,
	"related_run_started_by_employee_number" text,
	"related_run_started_by_first_name" text,
	"related_run_started_by_last_name" text,
	"related_run_locale_locale_name" text,
	"related_run_locale_business_id" text,
	"related_run_patient_contact" boolean,
	"related_run_patient_age" text,
	"related_run_transport_completed" boolean,
	"related_run_not_completed_reasons" text,
	"related_run_not_completed_details" text,
	"related_run_priority" text,
	"related_run_priority_notes" text,
	"related_run_priority_complete" boolean,
	"related_run_priority_complete_notes" text,
	"related_run_future_discussion" boolean,
	"related_run_future_discussion_notes" text,
	"related_run_future_discussion_complete" boolean,
	"related_run_purpose_of_run" text,
	"related_run_requesting_agency_or_facility" text,
	"related_run_destination_gps_location" text,
	"related_run_mile_post_or_major_roadway" text,
	"related_run_scene_cross_street_or_directions" text,
	"related_run_incident_address_street_address1" text,
	"related_run_incident_address_street_address2" text,
	"related_run_incident_address_city" text,
	"related_run_incident_address_state" text,
	"related_run_incident_address_zip_code" text,
	"related_run_incident_address_country" text,
	"related_run_timeframe_of_run" text,
	"related_run_communications_center" text,
	"related_run_patient_care_report_number" text,
	"related_run_matched_rules" jsonb,
	"_synced_at" timestamp with time zone NOT NULL,
	"_deleted_at" timestamp with time zone,
	"_extra" jsonb,
	"_hash" text NOT NULL,
	CONSTRAINT "run_log_form_responses_company_key_response_id_pk" PRIMARY KEY("company_key","response_id")
);
--> statement-breakpoint
CREATE TABLE "workforce"."run_log_forms" (
	"company_key" text NOT NULL,
	"form_id" integer NOT NULL,
	"form_type" text,
	"archived" boolean,
	"insert_date" timestamp with time zone,
	"update_date" timestamp with time zone,
	"_synced_at" timestamp with time zone NOT NULL,
	"_deleted_at" timestamp with time zone,
	"_extra" jsonb,
	"_hash" text NOT NULL,
	CONSTRAINT "run_log_forms_company_key_form_id_pk" PRIMARY KEY("company_key","form_id")
);
--> statement-breakpoint
CREATE TABLE "workforce"."schedule_shifts" (
	"company_key" text NOT NULL,
	"schedule_id" integer NOT NULL,
	"shift_id" integer NOT NULL,
	"shift_name" text,
	"_synced_at" timestamp with time zone NOT NULL,
	"_deleted_at" timestamp with time zone,
	"_extra" jsonb,
	CONSTRAINT "schedule_shifts_company_key_schedule_id_shift_id_pk" PRIMARY KEY("company_key","schedule_id","shift_id")
);
--> statement-breakpoint
CREATE TABLE "workforce"."schedules" (
	"company_key" text NOT NULL,
	"schedule_id" integer NOT NULL,
	"schedule_name" text,
	"_synced_at" timestamp with time zone NOT NULL,
	"_deleted_at" timestamp with time zone,
	"_extra" jsonb,
	"_hash" text NOT NULL,
	CONSTRAINT "schedules_company_key_schedule_id_pk" PRIMARY KEY("company_key","schedule_id")
);
--> statement-breakpoint
CREATE TABLE "workforce"."shift_assignments" (
	"company_key" text NOT NULL,
	"shift_assignment_id" integer NOT NULL,
	"schedule_id" integer,
	"schedule_name" text,
	"shift_id" integer,
	"shift_name" text,
	"job_title_id" integer,
	"job_title_name" text,
	"start_date_time" timestamp with time zone,
	"end_date_time" timestamp with time zone,
	"type" text,
	"assignee_service_id" integer,
	"assignee_employee_number" text,
	"assignee_first_name" text,
	"assignee_last_name" text,
	"vehicle_name" text,
	"clock_in_date_time" timestamp with time zone,
	"clock_out_date_time" timestamp with time zone,
	"_synced_at" timestamp with time zone NOT NULL,
	"_deleted_at" timestamp with time zone,
	"_extra" jsonb,
	"_hash" text NOT NULL,
	CONSTRAINT "shift_assignments_company_key_shift_assignment_id_pk" PRIMARY KEY("company_key","shift_assignment_id")
);
--> statement-breakpoint
CREATE TABLE "workforce"."supervisors" (
	"company_key" text NOT NULL,
	"service_id" integer NOT NULL,
	"individual_id" integer,
	"first_name" text,
	"middle_name" text,
	"last_name" text,
	"is_employee" integer,
	"is_supervisor" integer,
	"status" text,
	"_synced_at" timestamp with time zone NOT NULL,
	"_deleted_at" timestamp with time zone,
	"_extra" jsonb,
	"_hash" text NOT NULL,
	CONSTRAINT "supervisors_company_key_service_id_pk" PRIMARY KEY("company_key","service_id")
);
--> statement-breakpoint
CREATE TABLE "workforce"."sync_rejects" (
	"id" bigint PRIMARY KEY GENERATED ALWAYS AS IDENTITY (sequence name "workforce"."sync_rejects_id_seq" INCREMENT BY 1 MINVALUE 1 MAXVALUE 9223372036854775807 START WITH 1 CACHE 1),
	"company_key" text NOT NULL,
	"stream" text NOT NULL,
	"raw" jsonb,
	"reason" text NOT NULL,
	"seen_at" timestamp with time zone DEFAULT now() NOT NULL,
	"run_id" bigint
);
--> statement-breakpoint
CREATE TABLE "workforce"."sync_runs" (
	"id" bigint PRIMARY KEY GENERATED ALWAYS AS IDENTITY (sequence name "workforce"."sync_runs_id_seq" INCREMENT BY 1 MINVALUE 1 MAXVALUE 9223372036854775807 START WITH 1 CACHE 1),
	"company_key" text NOT NULL,
	"stream" text NOT NULL,
	"started_at" timestamp with time zone DEFAULT now() NOT NULL,
	"finished_at" timestamp with time zone,
	"outcome" text,
	"requests" integer DEFAULT 0 NOT NULL,
	"rows" integer DEFAULT 0 NOT NULL,
	"rejects" integer DEFAULT 0 NOT NULL,
	"error" text,
	"details" jsonb
);
--> statement-breakpoint
CREATE TABLE "workforce"."sync_state" (
	"company_key" text NOT NULL,
	"stream" text NOT NULL,
	"partition" text NOT NULL,
	"cursor" jsonb NOT NULL,
	"updated_at" timestamp with time zone DEFAULT now() NOT NULL,
	CONSTRAINT "sync_state_company_key_stream_partition_pk" PRIMARY KEY("company_key","stream","partition")
);
--> statement-breakpoint
CREATE TABLE "workforce"."time_off_approved_hours" (
	"company_key" text NOT NULL,
	"time_off_request_key" text NOT NULL,
	"_ord" integer NOT NULL,
	"approved_leave_policy" text,
	"approved_leave_type" text,
	"approved_hours" numeric,
	"_synced_at" timestamp with time zone NOT NULL,
	"_deleted_at" timestamp with time zone,
	"_extra" jsonb,
	CONSTRAINT "time_off_approved_hours_company_key_time_off_request_key__ord_pk" PRIMARY KEY("company_key","time_off_request_key","_ord")
);
--> statement-breakpoint
CREATE TABLE "workforce"."time_off_requests" (
	"company_key" text NOT NULL,
	"_key" text NOT NULL,
	"employee_service_id" integer,
	"employee_employee_number" text,
	"employee_first_name" text,
	"employee_last_name" text,
	"employee_unique_identifier" text,
	"start_date_time" timestamp with time zone,
	"end_date_time" timestamp with time zone,
	"requested_leave_policy" text,
	"requested_leave_type" text,
	"requested_date_time" timestamp with time zone,
	"status" text,
	"reviewed_by_service_id" integer,
	"reviewed_by_employee_number" text,
	"reviewed_by_first_name" text,
	"reviewed_by_last_name" text,
	"reviewed_by_unique_identifier" text,
	"reviewed_date_time" timestamp with time zone,
	"requested_hours" numeric,
	"_synced_at" timestamp with time zone NOT NULL,
	"_deleted_at" timestamp with time zone,
	"_extra" jsonb,
	"_hash" text NOT NULL,
	CONSTRAINT "time_off_requests_company_key__key_pk" PRIMARY KEY("company_key","_key")
);
--> statement-breakpoint
CREATE TABLE "workforce"."work_shifts" (
	"company_key" text NOT NULL,
	"work_shift_id" integer NOT NULL,
	"work_shift_name" text,
	"_synced_at" timestamp with time zone NOT NULL,
	"_deleted_at" timestamp with time zone,
	"_extra" jsonb,
	"_hash" text NOT NULL,
	CONSTRAINT "work_shifts_company_key_work_shift_id_pk" PRIMARY KEY("company_key","work_shift_id")
);
--> statement-breakpoint
CREATE TABLE "workforce"."work_statuses" (
	"company_key" text NOT NULL,
	"work_status_id" integer NOT NULL,
	"work_status_name" text,
	"_synced_at" timestamp with time zone NOT NULL,
	"_deleted_at" timestamp with time zone,
	"_extra" jsonb,
	"_hash" text NOT NULL,
	CONSTRAINT "work_statuses_company_key_work_status_id_pk" PRIMARY KEY("company_key","work_status_id")
);
--> statement-breakpoint
CREATE INDEX "assignment_changes_company_key_event_time_stamp_index" ON "workforce"."assignment_changes" USING btree ("company_key","event_time_stamp");--> statement-breakpoint
CREATE INDEX "assignment_changes_company_key_shift_assignment_id_index" ON "workforce"."assignment_changes" USING btree ("company_key","shift_assignment_id");--> statement-breakpoint
CREATE INDEX "form_audit_company_key_response_id_index" ON "workforce"."form_audit" USING btree ("company_key","response_id");--> statement-breakpoint
CREATE INDEX "form_audit_company_key_insert_date_index" ON "workforce"."form_audit" USING btree ("company_key","insert_date");--> statement-breakpoint
CREATE INDEX "form_responses_company_key_form_id_index" ON "workforce"."form_responses" USING btree ("company_key","form_id");--> statement-breakpoint
CREATE INDEX "individual_certifications_company_key_service_id_index" ON "workforce"."individual_certifications" USING btree ("company_key","service_id");--> statement-breakpoint
CREATE INDEX "individual_certifications_company_key_expiration_date_index" ON "workforce"."individual_certifications" USING btree ("company_key","expiration_date");--> statement-breakpoint
CREATE INDEX "individual_certifications_history_service_idx" ON "workforce"."individual_certifications_history" USING btree ("company_key","service_id","valid_from");--> statement-breakpoint
CREATE INDEX "individual_courses_company_key_start_date_index" ON "workforce"."individual_courses" USING btree ("company_key","start_date");--> statement-breakpoint
CREATE INDEX "individuals_company_key_employee_number_index" ON "workforce"."individuals" USING btree ("company_key","employee_number");--> statement-breakpoint
CREATE INDEX "push_outbox_status_company_key_id_index" ON "workforce"."push_outbox" USING btree ("status","company_key","id");--> statement-breakpoint
CREATE INDEX "required_certification_requirements_job_title_idx" ON "workforce"."required_certification_requirements" USING btree ("company_key","job_title_job_title_id");--> statement-breakpoint
CREATE INDEX "run_log_form_responses_partition_idx" ON "workforce"."run_log_form_responses" USING btree ("company_key","run_log_type_id","run_log_form_type");--> statement-breakpoint
CREATE INDEX "shift_assignments_company_key_start_date_time_index" ON "workforce"."shift_assignments" USING btree ("company_key","start_date_time");--> statement-breakpoint
CREATE INDEX "shift_assignments_company_key_assignee_service_id_index" ON "workforce"."shift_assignments" USING btree ("company_key","assignee_service_id");--> statement-breakpoint
CREATE INDEX "sync_rejects_company_key_stream_seen_at_index" ON "workforce"."sync_rejects" USING btree ("company_key","stream","seen_at");--> statement-breakpoint
CREATE INDEX "sync_runs_company_key_stream_started_at_index" ON "workforce"."sync_runs" USING btree ("company_key","stream","started_at");--> statement-breakpoint
CREATE INDEX "time_off_requests_company_key_start_date_time_index" ON "workforce"."time_off_requests" USING btree ("company_key","start_date_time");--> statement-breakpoint
CREATE INDEX "time_off_requests_company_key_employee_service_id_index" ON "workforce"."time_off_requests" USING btree ("company_key","employee_service_id");