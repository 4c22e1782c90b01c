CREATE TABLE "workforce"."personal_data_policies" (
	"company_key" text NOT NULL,
	"field" text NOT NULL,
	"action" text NOT NULL,
	"changed_at" timestamp with time zone DEFAULT now() NOT NULL,
	CONSTRAINT "personal_data_policies_company_key_field_pk" PRIMARY KEY("company_key","field"),
	CONSTRAINT "personal_data_policies_action" CHECK ("workforce"."personal_data_policies"."action" in ('keep', 'hash', 'block'))
);
--> statement-breakpoint
CREATE TABLE "workforce"."personal_data_versions" (
	"company_key" text PRIMARY KEY NOT NULL,
	"version" bigint DEFAULT 0 NOT NULL,
	"applied_version" bigint DEFAULT 0 NOT NULL,
	"changed_at" timestamp with time zone DEFAULT now() NOT NULL
);
--> statement-breakpoint
CREATE TABLE "workforce"."personal_data_suppressions" (
	"company_key" text NOT NULL,
	"person_hash" text NOT NULL,
	"erasure_id" bigint,
	"suppressed_at" timestamp with time zone DEFAULT now() NOT NULL,
	CONSTRAINT "personal_data_suppressions_company_key_person_hash_pk" PRIMARY KEY("company_key","person_hash")
);
--> statement-breakpoint
CREATE TABLE "workforce"."erasures" (
	"id" bigint PRIMARY KEY GENERATED ALWAYS AS IDENTITY (sequence name "workforce"."erasures_id_seq" INCREMENT BY 1 MINVALUE 1 MAXVALUE 9223372036854775807 START WITH 1 CACHE 1),
	"company_key" text NOT NULL,
	"erased_at" timestamp with time zone DEFAULT now() NOT NULL,
	"requested_by" text NOT NULL,
	"cause" text NOT NULL,
	"counts" jsonb NOT NULL
);
--> statement-breakpoint
CREATE INDEX "erasures_company_key_erased_at_index" ON "workforce"."erasures" USING btree ("company_key","erased_at");--> statement-breakpoint
-- HMAC-SHA-256 (RFC 2104) of a text, hex, with Postgres's own sha256: the key's inner and outer pads are made by
-- the caller, so the key itself never reaches the server's logs, and pgcrypto (an extension) is not needed.
CREATE FUNCTION "workforce"."personal_hmac"(p_value text, p_inner bytea, p_outer bytea) RETURNS text
LANGUAGE sql IMMUTABLE STRICT PARALLEL SAFE AS $$
  SELECT encode(sha256(p_outer || sha256(p_inner || convert_to(p_value, 'UTF8'))), 'hex')
$$;
--> statement-breakpoint
COMMENT ON FUNCTION "workforce"."personal_hmac"(text, bytea, bytea) IS 'HMAC-SHA-256 hex of a value given the inner and outer pads of the personal-data key: the hash policy and the suppression list.';
--> statement-breakpoint
-- A JSON value (_extra, a raw payload, a pushed change) with the personal fields named in p_blocked dropped and those
-- in p_hashed replaced by their HMAC, at any depth, as the row path does it (src/warehouse/personal-data/apply.ts).
CREATE FUNCTION "workforce"."personal_json"(p_value jsonb, p_blocked text[], p_hashed text[], p_inner bytea, p_outer bytea) RETURNS jsonb
LANGUAGE sql IMMUTABLE PARALLEL SAFE AS $$
  SELECT CASE jsonb_typeof(p_value)
    WHEN 'object' THEN (
      SELECT coalesce(jsonb_object_agg(e.key,
        CASE WHEN e.key = ANY(p_hashed) AND jsonb_typeof(e.value) = 'string' AND (e.value #>> '{}') !~ '^[0-9a-f]{64}$'
             THEN to_jsonb("workforce".personal_hmac(e.value #>> '{}', p_inner, p_outer))
             ELSE "workforce".personal_json(e.value, p_blocked, p_hashed, p_inner, p_outer) END), '{}'::jsonb)
      FROM jsonb_each(p_value) AS e
      WHERE NOT e.key = ANY(p_blocked))
    WHEN 'array' THEN (
      SELECT coalesce(jsonb_agg("workforce".personal_json(e.value, p_blocked, p_hashed, p_inner, p_outer) ORDER BY e.n), '[]'::jsonb)
      FROM jsonb_array_elements(p_value) WITH ORDINALITY AS e(value, n))
    ELSE p_value END
$$;
--> statement-breakpoint
COMMENT ON FUNCTION "workforce"."personal_json"(jsonb, text[], text[], bytea, bytea) IS 'A JSON value with the named personal fields dropped (p_blocked) or replaced by their HMAC (p_hashed), at any depth: how a policy change and an erasure rewrite _extra, raw payloads and pushed changes.';
--> statement-breakpoint
-- A page's transaction calls this: it waits for a policy change being committed (which holds the lock
-- exclusively), then fails the page if it was mapped under an older policy version than the one now stored.
CREATE FUNCTION "workforce"."check_personal_data_version"(p_company text, p_version text) RETURNS void
LANGUAGE plpgsql AS $$
BEGIN
  PERFORM pg_advisory_xact_lock_shared(hashtext('"workforce".personal_data'), hashtext(p_company));
  PERFORM pg_advisory_xact_lock_shared(hashtext('"workforce".personal_data'), hashtext('*'));
  IF p_version IS DISTINCT FROM (
    SELECT coalesce((SELECT version FROM "workforce"."personal_data_versions" WHERE company_key = p_company), 0) || ':' ||
           coalesce((SELECT version FROM "workforce"."personal_data_versions" WHERE company_key = '*'), 0)
  ) THEN
    RAISE EXCEPTION 'the personal-data policy of company % changed while the page was mapped', p_company
      USING ERRCODE = 'WF412';
  END IF;
END
$$;
--> statement-breakpoint
COMMENT ON FUNCTION "workforce"."check_personal_data_version"(text, text) IS 'Fails (SQLSTATE WF412) unless the page was mapped under the personal-data policy version now stored for its company and the default; called in each page transaction.';
--> statement-breakpoint
COMMENT ON TABLE "workforce"."personal_data_policies" IS 'What is stored of each personal field of the service, per company or as the default (company_key ''*''): keep, hash (HMAC-SHA-256 hex under the warehouse''s personal-data key) or block (never stored). A field without a row is kept.';--> statement-breakpoint
COMMENT ON COLUMN "workforce"."personal_data_policies"."company_key" IS 'Key of the company account this row was synced from; part of every key.';--> statement-breakpoint
COMMENT ON COLUMN "workforce"."personal_data_policies"."field" IS 'A personal field of the service, by its name (PrimaryEmailAddress, DateOfBirth, ...; see PERSONAL_FIELDS in src/source/schemas/personal.ts).';--> statement-breakpoint
COMMENT ON COLUMN "workforce"."personal_data_policies"."action" IS 'keep (stored as sent), hash (HMAC-SHA-256 hex under the personal-data key: equal values stay equal) or block (never stored).';--> statement-breakpoint
COMMENT ON COLUMN "workforce"."personal_data_policies"."changed_at" IS 'When this was last changed. An instant: the source''s UTC offset is normalized away.';--> statement-breakpoint
COMMENT ON TABLE "workforce"."personal_data_versions" IS 'One row per company (and ''*'' for the default): raised with each policy change or erasure; pages written under an older version are refused, and the stored rows are rewritten up to applied_version.';--> statement-breakpoint
COMMENT ON COLUMN "workforce"."personal_data_versions"."company_key" IS 'Key of the company account this row was synced from; part of every key.';--> statement-breakpoint
COMMENT ON COLUMN "workforce"."personal_data_versions"."version" IS 'Raised by one with each policy change or erasure for the company.';--> statement-breakpoint
COMMENT ON COLUMN "workforce"."personal_data_versions"."applied_version" IS 'The version up to which the stored rows have been rewritten; below version while a rewrite is under way or was interrupted.';--> statement-breakpoint
COMMENT ON COLUMN "workforce"."personal_data_versions"."changed_at" IS 'When this was last changed. An instant: the source''s UTC offset is normalized away.';--> statement-breakpoint
COMMENT ON TABLE "workforce"."personal_data_suppressions" IS 'People erased on request or by retention: a keyed hash of their ServiceId or EmployeeNumber, never the value. Later syncs store their records with every personal field blocked.';--> statement-breakpoint
COMMENT ON COLUMN "workforce"."personal_data_suppressions"."company_key" IS 'Key of the company account this row was synced from; part of every key.';--> statement-breakpoint
COMMENT ON COLUMN "workforce"."personal_data_suppressions"."person_hash" IS 'HMAC-SHA-256 hex under the personal-data key of the erased person''s id (service_id:N or employee_number:X): recognizes their records, reveals nothing.';--> statement-breakpoint
COMMENT ON COLUMN "workforce"."personal_data_suppressions"."erasure_id" IS 'The erasure (erasures.id) that put the person on the list.';--> statement-breakpoint
COMMENT ON COLUMN "workforce"."personal_data_suppressions"."suppressed_at" IS 'When the person was put on the list. An instant: the source''s UTC offset is normalized away.';--> statement-breakpoint
COMMENT ON TABLE "workforce"."erasures" IS 'One row per erasure of a person (wfsync erase, the API, or retention): when, who asked and the rows rewritten per table; no personal data.';--> statement-breakpoint
COMMENT ON COLUMN "workforce"."erasures"."id" IS 'Generated id.';--> statement-breakpoint
COMMENT ON COLUMN "workforce"."erasures"."company_key" IS 'Key of the company account this row was synced from; part of every key.';--> statement-breakpoint
COMMENT ON COLUMN "workforce"."erasures"."erased_at" IS 'When the erasure ran. An instant: the source''s UTC offset is normalized away.';--> statement-breakpoint
COMMENT ON COLUMN "workforce"."erasures"."requested_by" IS 'Who asked: the operator or API caller, or retention.';--> statement-breakpoint
COMMENT ON COLUMN "workforce"."erasures"."cause" IS 'Why: request (wfsync erase or the API) or retention (WFS_KEEP_FORMER_PERSONAL_DAYS).';--> statement-breakpoint
COMMENT ON COLUMN "workforce"."erasures"."counts" IS 'Rows rewritten per table (JSON); no personal data.';
