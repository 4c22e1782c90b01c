-- Comments of the push_outbox table and its columns.
COMMENT ON TABLE "workforce"."push_outbox" IS 'Changes queued for pushing to the service (individuals, credentials, verification results) and their status.';
--> statement-breakpoint
COMMENT ON COLUMN "workforce"."push_outbox"."id" IS 'Generated id.';
--> statement-breakpoint
COMMENT ON COLUMN "workforce"."push_outbox"."company_key" IS 'Key of the company account this row was synced from; part of every key.';
--> statement-breakpoint
COMMENT ON COLUMN "workforce"."push_outbox"."kind" IS 'Kind of change: individual, certification (credential insert or update) or verification (result).';
--> statement-breakpoint
COMMENT ON COLUMN "workforce"."push_outbox"."change_id" IS 'The caller''s id of the change (or one made at intake); unique per company, so a resend is the same change.';
--> statement-breakpoint
COMMENT ON COLUMN "workforce"."push_outbox"."entity_key" IS 'The entity the change applies to (en:EmployeeNumber, un:UniqueNumber, sid:ServiceId, ic:IndividualCertificationId, a holder and certification, or vr:RequestId).';
--> statement-breakpoint
COMMENT ON COLUMN "workforce"."push_outbox"."seq" IS 'Order of the change among its entity''s changes.';
--> statement-breakpoint
COMMENT ON COLUMN "workforce"."push_outbox"."holder_key" IS 'For a credential: its holder''s entity key; the credential waits for that individual''s pending changes.';
--> statement-breakpoint
COMMENT ON COLUMN "workforce"."push_outbox"."payload" IS 'The change to push (JSON); never holds an SSN in plain text (a CHECK constraint refuses it).';
--> statement-breakpoint
COMMENT ON COLUMN "workforce"."push_outbox"."sealed" IS 'Sensitive fields of the change (such as SSN), encrypted with the secret key; never plain text.';
--> statement-breakpoint
COMMENT ON COLUMN "workforce"."push_outbox"."status" IS 'State of the change: queued, sending, in_doubt, applied, refused or failed.';
--> statement-breakpoint
COMMENT ON COLUMN "workforce"."push_outbox"."attempts" IS 'Push attempts so far.';
--> statement-breakpoint
COMMENT ON COLUMN "workforce"."push_outbox"."error" IS 'Error message, when failed.';
--> statement-breakpoint
COMMENT ON COLUMN "workforce"."push_outbox"."fields" IS 'The service''s (or intake''s) reasons per field for a refusal (JSON).';
--> statement-breakpoint
COMMENT ON COLUMN "workforce"."push_outbox"."individual_id" IS 'IndividualId: the service id of the person, the same in every linked company.';
--> statement-breakpoint
COMMENT ON COLUMN "workforce"."push_outbox"."service_id" IS 'ServiceId: the service''s unique numeric person identifier.';
--> statement-breakpoint
COMMENT ON COLUMN "workforce"."push_outbox"."individual_certification_id" IS 'IndividualCertificationId: id of the credential at the service.';
--> statement-breakpoint
COMMENT ON COLUMN "workforce"."push_outbox"."coalesced_into" IS 'Id of the later change of the same entity this one was merged into; its outcome is that change.';
--> statement-breakpoint
COMMENT ON COLUMN "workforce"."push_outbox"."next_attempt_at" IS 'When the change may be tried again. An instant: the source''s UTC offset is normalized away.';
--> statement-breakpoint
COMMENT ON COLUMN "workforce"."push_outbox"."created_at" IS 'When the change was queued. An instant: the source''s UTC offset is normalized away.';
--> statement-breakpoint
COMMENT ON COLUMN "workforce"."push_outbox"."updated_at" IS 'When the row was last changed. An instant: the source''s UTC offset is normalized away.';
--> statement-breakpoint
COMMENT ON COLUMN "workforce"."push_outbox"."applied_at" IS 'When the service applied the change. An instant: the source''s UTC offset is normalized away.';
--> statement-breakpoint
COMMENT ON COLUMN "workforce"."push_outbox"."notified_at" IS 'When the webhook acknowledged the final state. An instant: the source''s UTC offset is normalized away.';
--> statement-breakpoint
COMMENT ON COLUMN "workforce"."push_outbox"."notify_attempts" IS 'Webhook deliveries tried for the final state.';
--> statement-breakpoint
COMMENT ON COLUMN "workforce"."push_outbox"."notify_next_at" IS 'When the next webhook delivery is due (null: none due). An instant: the source''s UTC offset is normalized away.';
