CREATE TABLE "workforce"."usage_daily" (
	"company_key" text NOT NULL,
	"stream" text NOT NULL,
	"day" date NOT NULL,
	"requests" bigint DEFAULT 0 NOT NULL,
	"runs" integer DEFAULT 0 NOT NULL,
	CONSTRAINT "usage_daily_company_key_day_stream_pk" PRIMARY KEY("company_key","day","stream")
);
--> statement-breakpoint
INSERT INTO "workforce"."usage_daily" ("company_key", "stream", "day", "requests", "runs")
SELECT "company_key", "stream", ("finished_at" AT TIME ZONE 'UTC')::date, sum("requests"), count(*)
FROM "workforce"."sync_runs" WHERE "finished_at" IS NOT NULL GROUP BY 1, 2, 3;
--> statement-breakpoint
COMMENT ON TABLE "workforce"."usage_daily" IS 'Requests sent to the service per company, stream and UTC day, added to as each run ends; kept when the runs are pruned.';
--> statement-breakpoint
COMMENT ON COLUMN "workforce"."usage_daily"."company_key" IS 'Key of the company account this row was synced from; part of every key.';
--> statement-breakpoint
COMMENT ON COLUMN "workforce"."usage_daily"."stream" IS 'Stream name (see the stream catalog).';
--> statement-breakpoint
COMMENT ON COLUMN "workforce"."usage_daily"."day" IS 'The UTC day.';
--> statement-breakpoint
COMMENT ON COLUMN "workforce"."usage_daily"."requests" IS 'Requests made to the service.';
--> statement-breakpoint
COMMENT ON COLUMN "workforce"."usage_daily"."runs" IS 'Runs that ended that day.';
