CREATE TABLE "workforce"."run_fences" (
	"company_key" text NOT NULL,
	"job" text NOT NULL,
	"token" bigint NOT NULL,
	"holder" text,
	"taken_at" timestamp with time zone DEFAULT now() NOT NULL,
	CONSTRAINT "run_fences_company_key_job_pk" PRIMARY KEY("company_key","job")
);
