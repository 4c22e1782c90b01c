CREATE TABLE "workforce"."events" (
	"id" bigint PRIMARY KEY GENERATED ALWAYS AS IDENTITY (sequence name "workforce"."events_id_seq" INCREMENT BY 1 MINVALUE 1 MAXVALUE 9223372036854775807 START WITH 1 CACHE 1),
	"company_key" text NOT NULL,
	"happened_at" timestamp with time zone DEFAULT now() NOT NULL,
	"event" text NOT NULL,
	"stream" text,
	"detail" jsonb
);
--> statement-breakpoint
CREATE INDEX "events_company_key_happened_at_index" ON "workforce"."events" USING btree ("company_key","happened_at");
--> statement-breakpoint
COMMENT ON TABLE "workforce"."events" IS 'Each company''s timeline: what happened to the company and its streams (added, paused, a stream failing or recovering, a field the service added, a re-sync), one row per event.';
--> statement-breakpoint
COMMENT ON COLUMN "workforce"."events"."id" IS 'Generated id.';
--> statement-breakpoint
COMMENT ON COLUMN "workforce"."events"."company_key" IS 'Key of the company account this row was synced from; part of every key.';
--> statement-breakpoint
COMMENT ON COLUMN "workforce"."events"."happened_at" IS 'When the event happened. An instant: the source''s UTC offset is normalized away.';
--> statement-breakpoint
COMMENT ON COLUMN "workforce"."events"."event" IS 'What happened (see EVENTS in src/warehouse/events.ts): company_added, stream_failing, field_appeared, resync_requested, ...';
--> statement-breakpoint
COMMENT ON COLUMN "workforce"."events"."stream" IS 'Stream name (see the stream catalog).';
--> statement-breakpoint
COMMENT ON COLUMN "workforce"."events"."detail" IS 'What else the event says (JSON): the error of a failing stream, the JSON path of a new field, ...; never a personal value.';