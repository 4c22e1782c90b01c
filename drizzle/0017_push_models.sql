CREATE TABLE "workforce"."push_models" (
	"name" text PRIMARY KEY NOT NULL,
	"company_key" text NOT NULL,
	"kind" text NOT NULL,
	"query" text NOT NULL,
	"key_field" text NOT NULL,
	"service_fields" text[] NOT NULL,
	"cron" text,
	"max_changes" integer DEFAULT 100 NOT NULL,
	"paused" boolean DEFAULT false NOT NULL,
	"created_at" timestamp with time zone DEFAULT now() NOT NULL,
	"updated_at" timestamp with time zone DEFAULT now() NOT NULL,
	CONSTRAINT "push_models_kind" CHECK ("workforce"."push_models"."kind" in ('individuals', 'certifications'))
);
--> statement-breakpoint
CREATE TABLE "workforce"."push_model_runs" (
	"id" bigint PRIMARY KEY GENERATED ALWAYS AS IDENTITY (sequence name "workforce"."push_model_runs_id_seq" INCREMENT BY 1 MINVALUE 1 MAXVALUE 9223372036854775807 START WITH 1 CACHE 1),
	"model_name" text NOT NULL,
	"company_key" text NOT NULL,
	"started_at" timestamp with time zone DEFAULT now() NOT NULL,
	"finished_at" timestamp with time zone,
	"outcome" text,
	"rows_read" integer DEFAULT 0 NOT NULL,
	"unchanged" integer DEFAULT 0 NOT NULL,
	"changed" integer DEFAULT 0 NOT NULL,
	"queued" integer DEFAULT 0 NOT NULL,
	"refused" integer DEFAULT 0 NOT NULL,
	"over_cap" boolean DEFAULT false NOT NULL,
	"error" text
);
--> statement-breakpoint
CREATE INDEX "push_model_runs_model_name_started_at_index" ON "workforce"."push_model_runs" USING btree ("model_name","started_at");
--> statement-breakpoint
COMMENT ON TABLE "workforce"."push_models" IS 'Push models: an operator''s SQL query of the desired state of individuals or credentials, diffed by key against the warehouse and pushed on a cron (wfsync push model).';
--> statement-breakpoint
COMMENT ON COLUMN "workforce"."push_models"."name" IS 'Name of the push model, unique.';
--> statement-breakpoint
COMMENT ON COLUMN "workforce"."push_models"."company_key" IS 'Key of the company account this row was synced from; part of every key.';
--> statement-breakpoint
COMMENT ON COLUMN "workforce"."push_models"."kind" IS 'What the model sets: individuals or certifications (credentials).';
--> statement-breakpoint
COMMENT ON COLUMN "workforce"."push_models"."query" IS 'The model''s SQL query of the desired state; its columns are named by the service''s fields.';
--> statement-breakpoint
COMMENT ON COLUMN "workforce"."push_models"."key_field" IS 'The service field a model row is matched by: EmployeeNumber, UniqueNumber, ServiceId or IndividualCertificationId.';
--> statement-breakpoint
COMMENT ON COLUMN "workforce"."push_models"."service_fields" IS 'The model query''s columns as service fields, checked when the model was added.';
--> statement-breakpoint
COMMENT ON COLUMN "workforce"."push_models"."cron" IS 'When the model runs (a cron expression, UTC); null: only when run by hand.';
--> statement-breakpoint
COMMENT ON COLUMN "workforce"."push_models"."max_changes" IS 'Most rows a run may change: a run with more differing rows queues nothing and fails.';
--> statement-breakpoint
COMMENT ON COLUMN "workforce"."push_models"."paused" IS 'True while the model is paused: its cron does not run it.';
--> statement-breakpoint
COMMENT ON COLUMN "workforce"."push_models"."created_at" IS 'When the row was created. An instant: the source''s UTC offset is normalized away.';
--> statement-breakpoint
COMMENT ON COLUMN "workforce"."push_models"."updated_at" IS 'When the row was last changed. An instant: the source''s UTC offset is normalized away.';
--> statement-breakpoint
COMMENT ON TABLE "workforce"."push_model_runs" IS 'One row per run of a push model: rows the query read, how many were unchanged, changed, queued or refused, and whether the run stopped over its cap.';
--> statement-breakpoint
COMMENT ON COLUMN "workforce"."push_model_runs"."id" IS 'Generated id.';
--> statement-breakpoint
COMMENT ON COLUMN "workforce"."push_model_runs"."model_name" IS 'Name of the push model the run belongs to.';
--> statement-breakpoint
COMMENT ON COLUMN "workforce"."push_model_runs"."company_key" IS 'Key of the company account this row was synced from; part of every key.';
--> statement-breakpoint
COMMENT ON COLUMN "workforce"."push_model_runs"."started_at" IS 'When the run started. An instant: the source''s UTC offset is normalized away.';
--> statement-breakpoint
COMMENT ON COLUMN "workforce"."push_model_runs"."finished_at" IS 'When the run finished; null while running. An instant: the source''s UTC offset is normalized away.';
--> statement-breakpoint
COMMENT ON COLUMN "workforce"."push_model_runs"."outcome" IS 'Outcome of the run: ok or failed.';
--> statement-breakpoint
COMMENT ON COLUMN "workforce"."push_model_runs"."rows_read" IS 'Rows the model''s query returned.';
--> statement-breakpoint
COMMENT ON COLUMN "workforce"."push_model_runs"."unchanged" IS 'Rows equal to the warehouse on every field the model names.';
--> statement-breakpoint
COMMENT ON COLUMN "workforce"."push_model_runs"."changed" IS 'Rows that differ from the warehouse (or whose key it lacks).';
--> statement-breakpoint
COMMENT ON COLUMN "workforce"."push_model_runs"."queued" IS 'Changes put in the push outbox by the run.';
--> statement-breakpoint
COMMENT ON COLUMN "workforce"."push_model_runs"."refused" IS 'Changed rows push validation refused (not queued).';
--> statement-breakpoint
COMMENT ON COLUMN "workforce"."push_model_runs"."over_cap" IS 'True when more rows differed than max_changes: nothing was queued.';
--> statement-breakpoint
COMMENT ON COLUMN "workforce"."push_model_runs"."error" IS 'Error message, when failed.';
