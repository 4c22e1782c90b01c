ALTER TABLE "workforce"."push_outbox" ALTER COLUMN "status" SET DEFAULT 'queued';--> statement-breakpoint
ALTER TABLE "workforce"."push_outbox" ADD COLUMN "change_id" text NOT NULL;--> statement-breakpoint
ALTER TABLE "workforce"."push_outbox" ADD COLUMN "entity_key" text NOT NULL;--> statement-breakpoint
ALTER TABLE "workforce"."push_outbox" ADD COLUMN "seq" integer NOT NULL;--> statement-breakpoint
ALTER TABLE "workforce"."push_outbox" ADD COLUMN "holder_key" text;--> statement-breakpoint
ALTER TABLE "workforce"."push_outbox" ADD COLUMN "fields" jsonb;--> statement-breakpoint
ALTER TABLE "workforce"."push_outbox" ADD COLUMN "individual_id" integer;--> statement-breakpoint
ALTER TABLE "workforce"."push_outbox" ADD COLUMN "service_id" integer;--> statement-breakpoint
ALTER TABLE "workforce"."push_outbox" ADD COLUMN "individual_certification_id" integer;--> statement-breakpoint
ALTER TABLE "workforce"."push_outbox" ADD COLUMN "coalesced_into" bigint;--> statement-breakpoint
ALTER TABLE "workforce"."push_outbox" ADD COLUMN "next_attempt_at" timestamp with time zone DEFAULT now() NOT NULL;--> statement-breakpoint
ALTER TABLE "workforce"."push_outbox" ADD COLUMN "applied_at" timestamp with time zone;--> statement-breakpoint
ALTER TABLE "workforce"."push_outbox" ADD COLUMN "notified_at" timestamp with time zone;--> statement-breakpoint
ALTER TABLE "workforce"."push_outbox" ADD COLUMN "notify_attempts" integer DEFAULT 0 NOT NULL;--> statement-breakpoint
ALTER TABLE "workforce"."push_outbox" ADD COLUMN "notify_next_at" timestamp with time zone;--> statement-breakpoint
CREATE UNIQUE INDEX "push_outbox_company_key_change_id_index" ON "workforce"."push_outbox" USING btree ("company_key","change_id");--> statement-breakpoint
CREATE INDEX "push_outbox_company_key_entity_key_seq_index" ON "workforce"."push_outbox" USING btree ("company_key","entity_key","seq");--> statement-breakpoint
CREATE INDEX "push_outbox_notify_next_at_index" ON "workforce"."push_outbox" USING btree ("notify_next_at") WHERE "workforce"."push_outbox"."notified_at" is null and "workforce"."push_outbox"."notify_next_at" is not null;