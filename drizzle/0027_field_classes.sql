CREATE TABLE "workforce"."field_classes" (
	"company_key" text NOT NULL,
	"field" text NOT NULL,
	"class" text NOT NULL,
	"classified_at" timestamp with time zone DEFAULT now() NOT NULL,
	CONSTRAINT "field_classes_company_key_field_pk" PRIMARY KEY("company_key","field"),
	CONSTRAINT "field_classes_class" CHECK ("workforce"."field_classes"."class" in ('not-personal', 'personal', 'patient'))
);
--> statement-breakpoint
CREATE TABLE "workforce"."new_field_modes" (
	"company_key" text PRIMARY KEY NOT NULL,
	"mode" text NOT NULL,
	"changed_at" timestamp with time zone DEFAULT now() NOT NULL,
	CONSTRAINT "new_field_modes_mode" CHECK ("workforce"."new_field_modes"."mode" in ('keep', 'hold'))
);
--> statement-breakpoint
-- A value hashed whole (src/warehouse/personal-data/json.ts hashLeaves): every string, number and flag in it
-- replaced by its HMAC (a number or flag by that of its JSON text), an object field's parts each; a string already
-- hashed stays.
CREATE FUNCTION "workforce"."personal_leaves"(p_value jsonb, p_inner bytea, p_outer bytea) RETURNS jsonb
LANGUAGE sql IMMUTABLE PARALLEL SAFE AS $$
  SELECT CASE jsonb_typeof(p_value)
    WHEN 'object' THEN (
      SELECT coalesce(jsonb_object_agg(e.key, "workforce".personal_leaves(e.value, p_inner, p_outer)), '{}'::jsonb)
      FROM jsonb_each(p_value) AS e)
    WHEN 'array' THEN (
      SELECT coalesce(jsonb_agg("workforce".personal_leaves(e.value, p_inner, p_outer) ORDER BY e.n), '[]'::jsonb)
      FROM jsonb_array_elements(p_value) WITH ORDINALITY AS e(value, n))
    WHEN 'null' THEN p_value
    WHEN 'string' THEN CASE WHEN (p_value #>> '{}') ~ '^[0-9a-f]{64}$' THEN p_value
      ELSE to_jsonb("workforce".personal_hmac(p_value #>> '{}', p_inner, p_outer)) END
    ELSE to_jsonb("workforce".personal_hmac(p_value #>> '{}', p_inner, p_outer)) END
$$;
--> statement-breakpoint
COMMENT ON FUNCTION "workforce"."personal_leaves"(jsonb, bytea, bytea) IS 'A JSON value with every string, number and flag in it replaced by its HMAC-SHA-256 hex (given the pads of the personal-data key): how a hashed field whose value is an object (IncidentAddress) is stored.';
--> statement-breakpoint
-- The catalog's fields by name at any depth, as before; a hashed field is now hashed whole, whatever its value.
CREATE OR REPLACE FUNCTION "workforce"."personal_json"(p_value jsonb, p_blocked text[], p_hashed text[], p_inner bytea, p_outer bytea) RETURNS jsonb
LANGUAGE sql IMMUTABLE PARALLEL SAFE AS $$
  SELECT CASE jsonb_typeof(p_value)
    WHEN 'object' THEN (
      SELECT coalesce(jsonb_object_agg(e.key,
        CASE WHEN e.key = ANY(p_hashed) THEN "workforce".personal_leaves(e.value, p_inner, p_outer)
             ELSE "workforce".personal_json(e.value, p_blocked, p_hashed, p_inner, p_outer) END), '{}'::jsonb)
      FROM jsonb_each(p_value) AS e
      WHERE NOT e.key = ANY(p_blocked))
    WHEN 'array' THEN (
      SELECT coalesce(jsonb_agg("workforce".personal_json(e.value, p_blocked, p_hashed, p_inner, p_outer) ORDER BY e.n), '[]'::jsonb)
      FROM jsonb_array_elements(p_value) WITH ORDINALITY AS e(value, n))
    ELSE p_value END
$$;
--> statement-breakpoint
-- Fields classified personal or patient, by their path from where the value sits (p_prefix: '' for a record, its
-- _extra or a raw payload; 'Answers.' for a list element's _extra): dropped (p_blocked) or hashed whole (p_hashed),
-- as the row path does it (src/warehouse/personal-data/json.ts scrubFields).
CREATE FUNCTION "workforce"."personal_fields"(p_value jsonb, p_prefix text, p_blocked text[], p_hashed text[], p_inner bytea, p_outer bytea) RETURNS jsonb
LANGUAGE sql IMMUTABLE PARALLEL SAFE AS $$
  SELECT CASE WHEN jsonb_typeof(p_value) = 'object' AND cardinality(p_blocked) + cardinality(p_hashed) > 0 THEN (
    SELECT coalesce(jsonb_object_agg(e.key,
      CASE WHEN p_prefix || e.key = ANY(p_hashed) THEN "workforce".personal_leaves(e.value, p_inner, p_outer)
           WHEN EXISTS (SELECT 1 FROM unnest(p_blocked || p_hashed) AS f
                        WHERE left(f, length(p_prefix || e.key) + 1) = p_prefix || e.key || '.')
             THEN "workforce".personal_fields(e.value, p_prefix || e.key || '.', p_blocked, p_hashed, p_inner, p_outer)
           ELSE e.value END), '{}'::jsonb)
    FROM jsonb_each(p_value) AS e
    WHERE NOT (p_prefix || e.key) = ANY(p_blocked))
  ELSE p_value END
$$;
--> statement-breakpoint
COMMENT ON FUNCTION "workforce"."personal_fields"(jsonb, text, text[], text[], bytea, bytea) IS 'A JSON value with the classified fields named by path dropped (p_blocked) or hashed whole (p_hashed); p_prefix is the path where the value sits: how a policy on a field the service added rewrites _extra and raw payloads.';
--> statement-breakpoint
-- The paths of a row's _extra that no class names (p_classified: every classified path and the catalog's names).
CREATE FUNCTION "workforce"."held_paths"(p_extra jsonb, p_prefix text, p_classified text[]) RETURNS text[]
LANGUAGE sql IMMUTABLE PARALLEL SAFE AS $$
  SELECT coalesce(array_agg(p_prefix || k ORDER BY k), '{}'::text[])
  FROM jsonb_object_keys(CASE WHEN jsonb_typeof(p_extra) = 'object' THEN p_extra ELSE '{}'::jsonb END) AS k
  WHERE NOT (p_prefix || k) = ANY(p_classified)
$$;
--> statement-breakpoint
COMMENT ON FUNCTION "workforce"."held_paths"(jsonb, text, text[]) IS 'The paths of the fields of an _extra (under p_prefix) that no class names: what hold does not store.';
--> statement-breakpoint
-- A row's _extra with only its classified fields; null when none is left (as the row path leaves it).
CREATE FUNCTION "workforce"."held_extra"(p_extra jsonb, p_prefix text, p_classified text[]) RETURNS jsonb
LANGUAGE sql IMMUTABLE PARALLEL SAFE AS $$
  SELECT CASE WHEN jsonb_typeof(p_extra) = 'object' THEN (
    SELECT jsonb_object_agg(e.key, e.value) FROM jsonb_each(p_extra) AS e WHERE (p_prefix || e.key) = ANY(p_classified))
  ELSE p_extra END
$$;
--> statement-breakpoint
COMMENT ON FUNCTION "workforce"."held_extra"(jsonb, text, text[]) IS 'An _extra without the fields no class names (null when none is left): how switching to hold rewrites what is stored.';
--> statement-breakpoint
-- The mark of the held paths on a content hash (src/warehouse/personal-data/hold.ts heldTag): the first 16 hex
-- digits of sha-256 of the distinct paths, sorted by their bytes, one a line.
CREATE FUNCTION "workforce"."held_tag"(p_paths text[]) RETURNS text
LANGUAGE sql IMMUTABLE STRICT PARALLEL SAFE AS $$
  SELECT left(encode(sha256(convert_to(array_to_string(
    array(SELECT d.p FROM (SELECT DISTINCT p FROM unnest(p_paths) AS p) AS d ORDER BY d.p COLLATE "C"), E'\n'), 'UTF8')), 'hex'), 16)
$$;
--> statement-breakpoint
COMMENT ON FUNCTION "workforce"."held_tag"(text[]) IS 'The mark a content hash carries after ~ naming which paths were held from the row: a field classified, or keep again, changes it, so the next read writes the row.';
--> statement-breakpoint
COMMENT ON COLUMN "workforce"."schema_changes"."field_path" IS 'Path of the field: a field of the record by its name, as it sits in the row''s _extra (read it with _extra->>''Name''); a field of the elements of a list stored as child rows after the list''s path (Answers.Comment: the child rows'' _extra->>''Comment'').';
--> statement-breakpoint
COMMENT ON TABLE "workforce"."field_classes" IS 'What each field the service added is, per company or as the default (company_key ''*''): not-personal, personal (an employee''s) or patient (a patient''s or health data). A company''s own row wins over the default''s; a field no column maps and no class names is unclassified. personal and patient put the field under the personal-data policies.';
--> statement-breakpoint
COMMENT ON COLUMN "workforce"."field_classes"."company_key" IS 'Key of the company account this row was synced from; part of every key.';
--> statement-breakpoint
COMMENT ON COLUMN "workforce"."field_classes"."field" IS 'A field the service sends that no column maps, by its path as schema_changes.field_path names it (BadgeNumber; a field of a list stored as child rows after the list, Answers.Comment).';
--> statement-breakpoint
COMMENT ON COLUMN "workforce"."field_classes"."class" IS 'not-personal (readable with the rest of the row), personal (an employee''s data) or patient (a patient''s or health data): both under the personal-data policies.';
--> statement-breakpoint
COMMENT ON COLUMN "workforce"."field_classes"."classified_at" IS 'When the field was given this class. An instant: the source''s UTC offset is normalized away.';
--> statement-breakpoint
COMMENT ON TABLE "workforce"."new_field_modes" IS 'Per company, or as the default (company_key ''*''): keep stores the values of unclassified fields in _extra; hold stores none until the field is classified (its name, type and counts stay in schema_changes).';
--> statement-breakpoint
COMMENT ON COLUMN "workforce"."new_field_modes"."company_key" IS 'Key of the company account this row was synced from; part of every key.';
--> statement-breakpoint
COMMENT ON COLUMN "workforce"."new_field_modes"."mode" IS 'keep (the values of unclassified fields are stored in _extra) or hold (none is stored until classified).';
--> statement-breakpoint
COMMENT ON COLUMN "workforce"."new_field_modes"."changed_at" IS 'When this was last changed. An instant: the source''s UTC offset is normalized away.';
