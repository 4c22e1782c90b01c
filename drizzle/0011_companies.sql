CREATE TABLE "workforce"."companies" (
	"company_key" text PRIMARY KEY NOT NULL,
	"base_url" text NOT NULL,
	"api_key_sealed" text NOT NULL,
	"form_ids" integer[] DEFAULT '{}' NOT NULL,
	"run_type_ids" integer[] DEFAULT '{}' NOT NULL,
	"rate_limit" text DEFAULT '100/60s' NOT NULL,
	"paused" boolean DEFAULT false NOT NULL,
	"managed_by" text DEFAULT 'operator' NOT NULL,
	"created_at" timestamp with time zone DEFAULT now() NOT NULL,
	"updated_at" timestamp with time zone DEFAULT now() NOT NULL,
	CONSTRAINT "companies_managed_by" CHECK ("workforce"."companies"."managed_by" in ('environment', 'operator')),
	CONSTRAINT "companies_api_key_sealed" CHECK ("workforce"."companies"."api_key_sealed" like 'v1.%')
);
--> statement-breakpoint
COMMENT ON TABLE "workforce"."companies" IS 'The companies the sync serves: added with wfsync companies or the ops server, or mirrored from WFS_COMPANIES / WFS_API_KEY (managed_by environment). Running processes read it again within WFS_COMPANIES_REFRESH_SECONDS.';
--> statement-breakpoint
COMMENT ON COLUMN "workforce"."companies"."company_key" IS 'Key of the company account: the company_key of every row synced from it.';
--> statement-breakpoint
COMMENT ON COLUMN "workforce"."companies"."base_url" IS 'Base URL of the service for this company.';
--> statement-breakpoint
COMMENT ON COLUMN "workforce"."companies"."api_key_sealed" IS 'The company''s API key, encrypted with the secret key (AES-256-GCM under WFS_SECRET_KEY); never plain text.';
--> statement-breakpoint
COMMENT ON COLUMN "workforce"."companies"."form_ids" IS 'Generic form ids whose responses are synced.';
--> statement-breakpoint
COMMENT ON COLUMN "workforce"."companies"."run_type_ids" IS 'Run-log type ids whose form responses are synced.';
--> statement-breakpoint
COMMENT ON COLUMN "workforce"."companies"."rate_limit" IS 'The API key''s budget: requests per window, such as 100/60s.';
--> statement-breakpoint
COMMENT ON COLUMN "workforce"."companies"."paused" IS 'True while the company is paused: no run starts, and runs under way stop after their page.';
--> statement-breakpoint
COMMENT ON COLUMN "workforce"."companies"."managed_by" IS 'environment (mirrored from WFS_COMPANIES or WFS_API_KEY at start-up; change it there) or operator (wfsync companies, the ops server).';
--> statement-breakpoint
COMMENT ON COLUMN "workforce"."companies"."created_at" IS 'When the company was added.';
--> statement-breakpoint
COMMENT ON COLUMN "workforce"."companies"."updated_at" IS 'When the company was last changed (paused, resumed, key rotated, mirrored).';
