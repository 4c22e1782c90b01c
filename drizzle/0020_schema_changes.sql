CREATE TABLE "workforce"."schema_changes" (
	"company_key" text NOT NULL,
	"stream" text NOT NULL,
	"field_path" text NOT NULL,
	"json_type" text NOT NULL,
	"example" jsonb,
	"field_first_seen_at" timestamp with time zone DEFAULT now() NOT NULL,
	"field_last_seen_at" timestamp with time zone DEFAULT now() NOT NULL,
	"records_seen" bigint DEFAULT 0 NOT NULL,
	"reads_without" integer DEFAULT 0 NOT NULL,
	"gone_at" timestamp with time zone,
	CONSTRAINT "schema_changes_company_key_stream_field_path_pk" PRIMARY KEY("company_key","stream","field_path")
);
--> statement-breakpoint
COMMENT ON TABLE "workforce"."schema_changes" IS 'Fields the service sends that no column maps yet (kept in each row''s _extra), one row per company, stream and JSON path: when first and last seen, how many records carried it, its JSON type and a masked example, and when it stopped coming.';
--> statement-breakpoint
COMMENT ON COLUMN "workforce"."schema_changes"."company_key" IS 'Key of the company account this row was synced from; part of every key.';
--> statement-breakpoint
COMMENT ON COLUMN "workforce"."schema_changes"."stream" IS 'Stream name (see the stream catalog).';
--> statement-breakpoint
COMMENT ON COLUMN "workforce"."schema_changes"."field_path" IS 'Path of the field in the record, as it sits in _extra (top-level fields: their name; read it with _extra->>''Name'').';
--> statement-breakpoint
COMMENT ON COLUMN "workforce"."schema_changes"."json_type" IS 'JSON type of the field when first seen: string, number, boolean, object, array or null.';
--> statement-breakpoint
COMMENT ON COLUMN "workforce"."schema_changes"."example" IS 'A value the field had, with every string masked (letters as x, digits as 9) so no personal value is kept.';
--> statement-breakpoint
COMMENT ON COLUMN "workforce"."schema_changes"."field_first_seen_at" IS 'When a read first returned a record with the field. An instant: the source''s UTC offset is normalized away.';
--> statement-breakpoint
COMMENT ON COLUMN "workforce"."schema_changes"."field_last_seen_at" IS 'When a read last returned a record with the field. An instant: the source''s UTC offset is normalized away.';
--> statement-breakpoint
COMMENT ON COLUMN "workforce"."schema_changes"."records_seen" IS 'Records read with the field, over every read.';
--> statement-breakpoint
COMMENT ON COLUMN "workforce"."schema_changes"."reads_without" IS 'Complete reads in a row whose records all lacked the field (three and it is gone).';
--> statement-breakpoint
COMMENT ON COLUMN "workforce"."schema_changes"."gone_at" IS 'When the field was found gone: absent from every record of three complete reads in a row; null while it comes. An instant: the source''s UTC offset is normalized away.';