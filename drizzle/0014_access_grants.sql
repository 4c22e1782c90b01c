CREATE TABLE "workforce"."access_grants" (
	"role" text NOT NULL,
	"company_key" text NOT NULL,
	"personal" boolean DEFAULT false NOT NULL,
	"granted_at" timestamp with time zone DEFAULT now() NOT NULL,
	CONSTRAINT "access_grants_role_company_key_pk" PRIMARY KEY("role","company_key")
);

--> statement-breakpoint
COMMENT ON TABLE "workforce"."access_grants" IS 'Which of the operator''s Postgres roles read which companies'' rows (wfsync access); the row-level security policy of every table with a company_key reads it.';
--> statement-breakpoint
COMMENT ON COLUMN "workforce"."access_grants"."role" IS 'A Postgres role of the operator (by name) that reads this company''s rows.';
--> statement-breakpoint
COMMENT ON COLUMN "workforce"."access_grants"."company_key" IS 'Key of the company account this row was synced from; part of every key.';
--> statement-breakpoint
COMMENT ON COLUMN "workforce"."access_grants"."personal" IS 'Whether the role also reads the personal columns (names, e-mail, phones, address, birth date, ...); false: only the other columns.';
--> statement-breakpoint
COMMENT ON COLUMN "workforce"."access_grants"."granted_at" IS 'When the role was granted this company.';
