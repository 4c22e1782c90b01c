-- One row per refused record and reason: rows kept so far are given the key their payload names and collapsed.
ALTER TABLE "workforce"."sync_rejects" ADD COLUMN "record_key" text;--> statement-breakpoint
ALTER TABLE "workforce"."sync_rejects" ADD COLUMN "first_seen_at" timestamp with time zone DEFAULT now() NOT NULL;--> statement-breakpoint
ALTER TABLE "workforce"."sync_rejects" ADD COLUMN "times_seen" integer DEFAULT 1 NOT NULL;--> statement-breakpoint
ALTER TABLE "workforce"."sync_rejects" ADD COLUMN "resolved_at" timestamp with time zone;--> statement-breakpoint
-- Streams keyed by one id column: the key is that column's field of the payload (or of the parent, for a child
-- element). Any other payload, and a stream whose key is a hash of several fields, keys on a hash of the payload.
UPDATE "workforce"."sync_rejects" r SET first_seen_at = r.seen_at, record_key = coalesce(
  (SELECT jsonb_build_array(coalesce(r.raw->'parent'->>k.col, f.value))::text
   FROM (VALUES
     ('certifications', 'certification_id'), ('work-statuses', 'work_status_id'), ('departments', 'department_id'),
     ('work-shifts', 'work_shift_id'), ('job-titles', 'job_title_id'), ('locales', 'locale_id'),
     ('individuals', 'service_id'), ('supervisors', 'service_id'), ('schedules', 'schedule_id'),
     ('run-log-forms', 'form_id'), ('individual-certifications', 'individual_certification_id'),
     ('pending-certifications', 'individual_certification_id'), ('required-certification-status', 'employment_service_id'),
     ('shift-assignments', 'shift_assignment_id'), ('individual-courses', 'individual_course_id'),
     ('form-responses', 'response_id'), ('run-log-form-responses', 'response_id')
   ) AS k(stream, col)
   LEFT JOIN LATERAL (
     SELECT e.value FROM jsonb_each_text(CASE WHEN jsonb_typeof(r.raw) = 'object' THEN r.raw ELSE '{}'::jsonb END) e
     WHERE lower(regexp_replace(e.key, '([a-z0-9])([A-Z])', '\1_\2', 'g')) = k.col LIMIT 1
   ) f ON true
   WHERE k.stream = r.stream AND coalesce(r.raw->'parent'->>k.col, f.value) IS NOT NULL),
  'payload:' || md5(coalesce(r.raw, 'null'::jsonb)::text));--> statement-breakpoint
UPDATE "workforce"."sync_rejects" r SET first_seen_at = g.first_seen_at, times_seen = g.times_seen
FROM (
  SELECT max(id) AS id, min(seen_at) AS first_seen_at, count(*)::int AS times_seen
  FROM "workforce"."sync_rejects" GROUP BY company_key, stream, record_key, reason
) g WHERE r.id = g.id;--> statement-breakpoint
DELETE FROM "workforce"."sync_rejects" r USING "workforce"."sync_rejects" later
WHERE later.company_key = r.company_key AND later.stream = r.stream AND later.record_key = r.record_key
  AND later.reason = r.reason AND later.id > r.id;--> statement-breakpoint
ALTER TABLE "workforce"."sync_rejects" ALTER COLUMN "record_key" SET NOT NULL;--> statement-breakpoint
CREATE UNIQUE INDEX "sync_rejects_company_key_stream_record_key_reason_index" ON "workforce"."sync_rejects" USING btree ("company_key","stream","record_key","reason");--> statement-breakpoint
COMMENT ON TABLE "workforce"."sync_rejects" IS 'Records that failed their schema, one row per record and reason however often read, with the raw payload (SSN removed); the stream went on.';--> statement-breakpoint
COMMENT ON COLUMN "workforce"."sync_rejects"."record_key" IS 'The refused record''s key as its row has it (a JSON list of the key values), or payload: and a hash of the payload when it gives no key.';--> statement-breakpoint
COMMENT ON COLUMN "workforce"."sync_rejects"."first_seen_at" IS 'When a read first refused the record. An instant: the source''s UTC offset is normalized away.';--> statement-breakpoint
COMMENT ON COLUMN "workforce"."sync_rejects"."seen_at" IS 'When a read last refused the record. An instant: the source''s UTC offset is normalized away.';--> statement-breakpoint
COMMENT ON COLUMN "workforce"."sync_rejects"."times_seen" IS 'How many pages refused the record for this reason.';--> statement-breakpoint
COMMENT ON COLUMN "workforce"."sync_rejects"."resolved_at" IS 'When the record was next written (it passed); null while it is still refused. An instant: the source''s UTC offset is normalized away.';
