DROP INDEX "workforce"."assignment_changes_company_key_event_time_stamp_index";--> statement-breakpoint
DROP INDEX "workforce"."assignment_changes_company_key_shift_assignment_id_index";--> statement-breakpoint
DROP INDEX "workforce"."form_audit_company_key_response_id_index";--> statement-breakpoint
DROP INDEX "workforce"."form_audit_company_key_insert_date_index";--> statement-breakpoint
DROP INDEX "workforce"."form_responses_company_key_form_id_index";--> statement-breakpoint
DROP INDEX "workforce"."individual_certifications_company_key_service_id_index";--> statement-breakpoint
DROP INDEX "workforce"."individual_certifications_company_key_expiration_date_index";--> statement-breakpoint
DROP INDEX "workforce"."individual_courses_company_key_start_date_index";--> statement-breakpoint
DROP INDEX "workforce"."individuals_company_key_employee_number_index";--> statement-breakpoint
DROP INDEX "workforce"."shift_assignments_company_key_start_date_time_index";--> statement-breakpoint
DROP INDEX "workforce"."shift_assignments_company_key_assignee_service_id_index";--> statement-breakpoint
DROP INDEX "workforce"."time_off_requests_company_key_start_date_time_index";--> statement-breakpoint
DROP INDEX "workforce"."time_off_requests_company_key_employee_service_id_index";--> statement-breakpoint
DROP INDEX "workforce"."individual_certifications_history_service_idx";--> statement-breakpoint
DROP INDEX "workforce"."required_certification_requirements_job_title_idx";--> statement-breakpoint
DROP INDEX "workforce"."run_log_form_responses_partition_idx";--> statement-breakpoint
CREATE INDEX "assignment_changes_event_time_stamp_company_key_index" ON "workforce"."assignment_changes" USING btree ("event_time_stamp","company_key");--> statement-breakpoint
CREATE INDEX "assignment_changes_shift_assignment_id_company_key_index" ON "workforce"."assignment_changes" USING btree ("shift_assignment_id","company_key");--> statement-breakpoint
CREATE INDEX "form_audit_response_id_company_key_index" ON "workforce"."form_audit" USING btree ("response_id","company_key");--> statement-breakpoint
CREATE INDEX "form_audit_insert_date_company_key_index" ON "workforce"."form_audit" USING btree ("insert_date","company_key");--> statement-breakpoint
CREATE INDEX "form_responses_form_id_company_key_index" ON "workforce"."form_responses" USING btree ("form_id","company_key");--> statement-breakpoint
CREATE INDEX "individual_certifications_service_id_company_key_index" ON "workforce"."individual_certifications" USING btree ("service_id","company_key");--> statement-breakpoint
CREATE INDEX "individual_certifications_expiration_date_company_key_index" ON "workforce"."individual_certifications" USING btree ("expiration_date","company_key");--> statement-breakpoint
CREATE INDEX "individual_courses_start_date_company_key_index" ON "workforce"."individual_courses" USING btree ("start_date","company_key");--> statement-breakpoint
CREATE INDEX "individuals_employee_number_company_key_index" ON "workforce"."individuals" USING btree ("employee_number","company_key");--> statement-breakpoint
CREATE INDEX "shift_assignments_start_date_time_company_key_index" ON "workforce"."shift_assignments" USING btree ("start_date_time","company_key");--> statement-breakpoint
CREATE INDEX "shift_assignments_assignee_service_id_company_key_index" ON "workforce"."shift_assignments" USING btree ("assignee_service_id","company_key");--> statement-breakpoint
CREATE INDEX "time_off_requests_start_date_time_company_key_index" ON "workforce"."time_off_requests" USING btree ("start_date_time","company_key");--> statement-breakpoint
CREATE INDEX "time_off_requests_employee_service_id_company_key_index" ON "workforce"."time_off_requests" USING btree ("employee_service_id","company_key");--> statement-breakpoint
CREATE INDEX "individual_certifications_history_service_idx" ON "workforce"."individual_certifications_history" USING btree ("service_id","company_key","valid_from");--> statement-breakpoint
CREATE INDEX "required_certification_requirements_job_title_idx" ON "workforce"."required_certification_requirements" USING btree ("job_title_job_title_id","company_key");--> statement-breakpoint
CREATE INDEX "run_log_form_responses_partition_idx" ON "workforce"."run_log_form_responses" USING btree ("run_log_type_id","run_log_form_type","company_key");