ALTER TABLE "workforce"."individuals" ADD COLUMN "date_of_birth_instant" timestamp with time zone;--> statement-breakpoint
ALTER TABLE "workforce"."individuals" ADD COLUMN "date_of_birth_utc_offset" text;--> statement-breakpoint
ALTER TABLE "workforce"."individuals" ADD COLUMN "hire_date_instant" timestamp with time zone;--> statement-breakpoint
ALTER TABLE "workforce"."individuals" ADD COLUMN "hire_date_utc_offset" text;--> statement-breakpoint
ALTER TABLE "workforce"."individuals_history" ADD COLUMN "date_of_birth_instant" timestamp with time zone;--> statement-breakpoint
ALTER TABLE "workforce"."individuals_history" ADD COLUMN "date_of_birth_utc_offset" text;--> statement-breakpoint
ALTER TABLE "workforce"."individuals_history" ADD COLUMN "hire_date_instant" timestamp with time zone;--> statement-breakpoint
ALTER TABLE "workforce"."individuals_history" ADD COLUMN "hire_date_utc_offset" text;--> statement-breakpoint
ALTER TABLE "workforce"."individual_certifications" ADD COLUMN "activation_date_instant" timestamp with time zone;--> statement-breakpoint
ALTER TABLE "workforce"."individual_certifications" ADD COLUMN "activation_date_utc_offset" text;--> statement-breakpoint
ALTER TABLE "workforce"."individual_certifications" ADD COLUMN "expiration_date_instant" timestamp with time zone;--> statement-breakpoint
ALTER TABLE "workforce"."individual_certifications" ADD COLUMN "expiration_date_utc_offset" text;--> statement-breakpoint
ALTER TABLE "workforce"."individual_certifications" ADD COLUMN "update_date_instant" timestamp with time zone;--> statement-breakpoint
ALTER TABLE "workforce"."individual_certifications" ADD COLUMN "update_date_utc_offset" text;--> statement-breakpoint
ALTER TABLE "workforce"."individual_certifications_history" ADD COLUMN "activation_date_instant" timestamp with time zone;--> statement-breakpoint
ALTER TABLE "workforce"."individual_certifications_history" ADD COLUMN "activation_date_utc_offset" text;--> statement-breakpoint
ALTER TABLE "workforce"."individual_certifications_history" ADD COLUMN "expiration_date_instant" timestamp with time zone;--> statement-breakpoint
ALTER TABLE "workforce"."individual_certifications_history" ADD COLUMN "expiration_date_utc_offset" text;--> statement-breakpoint
ALTER TABLE "workforce"."individual_certifications_history" ADD COLUMN "update_date_instant" timestamp with time zone;--> statement-breakpoint
ALTER TABLE "workforce"."individual_certifications_history" ADD COLUMN "update_date_utc_offset" text;--> statement-breakpoint
ALTER TABLE "workforce"."pending_certifications" ADD COLUMN "activation_date_instant" timestamp with time zone;--> statement-breakpoint
ALTER TABLE "workforce"."pending_certifications" ADD COLUMN "activation_date_utc_offset" text;--> statement-breakpoint
ALTER TABLE "workforce"."pending_certifications" ADD COLUMN "expiration_date_instant" timestamp with time zone;--> statement-breakpoint
ALTER TABLE "workforce"."pending_certifications" ADD COLUMN "expiration_date_utc_offset" text;--> statement-breakpoint
ALTER TABLE "workforce"."pending_certifications" ADD COLUMN "update_date_instant" timestamp with time zone;--> statement-breakpoint
ALTER TABLE "workforce"."pending_certifications" ADD COLUMN "update_date_utc_offset" text;--> statement-breakpoint
ALTER TABLE "workforce"."required_certification_requirements" ADD COLUMN "fulfilling_certification_activation_date_instant" timestamp with time zone;--> statement-breakpoint
ALTER TABLE "workforce"."required_certification_requirements" ADD COLUMN "fulfilling_certification_activation_date_utc_offset" text;--> statement-breakpoint
ALTER TABLE "workforce"."required_certification_requirements" ADD COLUMN "fulfilling_certification_expiration_date_instant" timestamp with time zone;--> statement-breakpoint
ALTER TABLE "workforce"."required_certification_requirements" ADD COLUMN "fulfilling_certification_expiration_date_utc_offset" text;--> statement-breakpoint
ALTER TABLE "workforce"."shift_assignments" ADD COLUMN "start_date_time_local_date" date;--> statement-breakpoint
ALTER TABLE "workforce"."shift_assignments" ADD COLUMN "start_date_time_utc_offset" text;--> statement-breakpoint
ALTER TABLE "workforce"."shift_assignments" ADD COLUMN "end_date_time_local_date" date;--> statement-breakpoint
ALTER TABLE "workforce"."shift_assignments" ADD COLUMN "end_date_time_utc_offset" text;--> statement-breakpoint
ALTER TABLE "workforce"."shift_assignments" ADD COLUMN "clock_in_date_time_local_date" date;--> statement-breakpoint
ALTER TABLE "workforce"."shift_assignments" ADD COLUMN "clock_in_date_time_utc_offset" text;--> statement-breakpoint
ALTER TABLE "workforce"."shift_assignments" ADD COLUMN "clock_out_date_time_local_date" date;--> statement-breakpoint
ALTER TABLE "workforce"."shift_assignments" ADD COLUMN "clock_out_date_time_utc_offset" text;--> statement-breakpoint
ALTER TABLE "workforce"."assignment_changes" ADD COLUMN "start_date_time_local_date" date;--> statement-breakpoint
ALTER TABLE "workforce"."assignment_changes" ADD COLUMN "start_date_time_utc_offset" text;--> statement-breakpoint
ALTER TABLE "workforce"."assignment_changes" ADD COLUMN "end_date_time_local_date" date;--> statement-breakpoint
ALTER TABLE "workforce"."assignment_changes" ADD COLUMN "end_date_time_utc_offset" text;--> statement-breakpoint
ALTER TABLE "workforce"."time_off_requests" ADD COLUMN "start_date_time_local_date" date;--> statement-breakpoint
ALTER TABLE "workforce"."time_off_requests" ADD COLUMN "start_date_time_utc_offset" text;--> statement-breakpoint
ALTER TABLE "workforce"."time_off_requests" ADD COLUMN "end_date_time_local_date" date;--> statement-breakpoint
ALTER TABLE "workforce"."time_off_requests" ADD COLUMN "end_date_time_utc_offset" text;--> statement-breakpoint
ALTER TABLE "workforce"."individual_courses" ADD COLUMN "start_date_instant" timestamp with time zone;--> statement-breakpoint
ALTER TABLE "workforce"."individual_courses" ADD COLUMN "start_date_utc_offset" text;--> statement-breakpoint
ALTER TABLE "workforce"."individual_courses" ADD COLUMN "end_date_instant" timestamp with time zone;--> statement-breakpoint
ALTER TABLE "workforce"."individual_courses" ADD COLUMN "end_date_utc_offset" text;--> statement-breakpoint
ALTER TABLE "workforce"."individual_courses" ADD COLUMN "exam_start_date_instant" timestamp with time zone;--> statement-breakpoint
ALTER TABLE "workforce"."individual_courses" ADD COLUMN "exam_start_date_utc_offset" text;--> statement-breakpoint
ALTER TABLE "workforce"."individual_courses" ADD COLUMN "exam_end_date_instant" timestamp with time zone;--> statement-breakpoint
ALTER TABLE "workforce"."individual_courses" ADD COLUMN "exam_end_date_utc_offset" text;--> statement-breakpoint
ALTER TABLE "workforce"."form_responses" ADD COLUMN "start_date_local_date" date;--> statement-breakpoint
ALTER TABLE "workforce"."form_responses" ADD COLUMN "start_date_utc_offset" text;--> statement-breakpoint
ALTER TABLE "workforce"."form_responses" ADD COLUMN "related_employee_health_event_event_date_time_local_date" date;--> statement-breakpoint
ALTER TABLE "workforce"."form_responses" ADD COLUMN "related_employee_health_event_event_date_time_utc_offset" text;--> statement-breakpoint
ALTER TABLE "workforce"."form_responses" ADD COLUMN "related_quality_improvement_incident_incident_date_time_local_date" date;--> statement-breakpoint
ALTER TABLE "workforce"."form_responses" ADD COLUMN "related_quality_improvement_incident_incident_date_time_utc_offset" text;--> statement-breakpoint
ALTER TABLE "workforce"."form_responses" ADD COLUMN "related_shift_shift_date_local_date" date;--> statement-breakpoint
ALTER TABLE "workforce"."form_responses" ADD COLUMN "related_shift_shift_date_utc_offset" text;--> statement-breakpoint
ALTER TABLE "workforce"."run_log_form_responses" ADD COLUMN "start_date_local_date" date;--> statement-breakpoint
ALTER TABLE "workforce"."run_log_form_responses" ADD COLUMN "start_date_utc_offset" text;--> statement-breakpoint
ALTER TABLE "workforce"."run_log_form_responses" ADD COLUMN "related_run_run_date_time_local_date" date;--> statement-breakpoint
ALTER TABLE "workforce"."run_log_form_responses" ADD COLUMN "related_run_run_date_time_utc_offset" text;--> statement-breakpoint
ALTER TABLE "workforce"."form_audit" ADD COLUMN "answer_date_local_date" date;--> statement-breakpoint
ALTER TABLE "workforce"."form_audit" ADD COLUMN "answer_date_utc_offset" text;--> statement-breakpoint
ALTER TABLE "workforce"."form_audit" ADD COLUMN "insert_date_local_date" date;--> statement-breakpoint
ALTER TABLE "workforce"."form_audit" ADD COLUMN "insert_date_utc_offset" text;