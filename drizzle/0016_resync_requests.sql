CREATE TABLE "workforce"."resync_requests" (
	"id" bigint PRIMARY KEY GENERATED ALWAYS AS IDENTITY (sequence name "workforce"."resync_requests_id_seq" INCREMENT BY 1 MINVALUE 1 MAXVALUE 9223372036854775807 START WITH 1 CACHE 1),
	"company_key" text NOT NULL,
	"stream" text NOT NULL,
	"via" text NOT NULL,
	"requested_at" timestamp with time zone DEFAULT now() NOT NULL,
	"started_at" timestamp with time zone,
	"finished_at" timestamp with time zone,
	"outcome" text
);
--> statement-breakpoint
CREATE INDEX "resync_requests_company_key_stream_requested_at_index" ON "workforce"."resync_requests" USING btree ("company_key","stream","requested_at");--> statement-breakpoint
COMMENT ON TABLE "workforce"."resync_requests" IS 'Re-syncs of one stream an operator asked for (wfsync resync, the API, the dashboard): when asked, started and finished, and the outcome.';
--> statement-breakpoint
COMMENT ON COLUMN "workforce"."resync_requests"."id" IS 'Generated id.';
--> statement-breakpoint
COMMENT ON COLUMN "workforce"."resync_requests"."company_key" IS 'Key of the company account this row was synced from; part of every key.';
--> statement-breakpoint
COMMENT ON COLUMN "workforce"."resync_requests"."stream" IS 'Stream name (see the stream catalog).';
--> statement-breakpoint
COMMENT ON COLUMN "workforce"."resync_requests"."via" IS 'Where the re-sync was asked for: cli, api or dashboard.';
--> statement-breakpoint
COMMENT ON COLUMN "workforce"."resync_requests"."requested_at" IS 'When the re-sync was asked for. An instant: the source''s UTC offset is normalized away.';
--> statement-breakpoint
COMMENT ON COLUMN "workforce"."resync_requests"."started_at" IS 'When the run started. An instant: the source''s UTC offset is normalized away.';
--> statement-breakpoint
COMMENT ON COLUMN "workforce"."resync_requests"."finished_at" IS 'When the run finished; null while running. An instant: the source''s UTC offset is normalized away.';
--> statement-breakpoint
COMMENT ON COLUMN "workforce"."resync_requests"."outcome" IS 'Outcome of the run: ok or failed.';
