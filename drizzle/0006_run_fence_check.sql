-- A page's transaction calls this first: it fails the transaction unless the run still holds the job's latest
-- fence token, and holds the fence row (FOR SHARE) until the page commits, so a run taking the lock waits for
-- the page in flight and every later page of the old run is refused.
CREATE FUNCTION "workforce"."check_run_fence"(p_company text, p_job text, p_token bigint) RETURNS void
LANGUAGE plpgsql AS $$
BEGIN
  PERFORM 1 FROM "workforce"."run_fences" WHERE company_key = p_company AND job = p_job AND token = p_token FOR SHARE;
  IF NOT FOUND THEN
    RAISE EXCEPTION 'run of job % for company % was fenced off: it lost its lock and a later run holds it', p_job, p_company
      USING ERRCODE = 'WF409';
  END IF;
END
$$;--> statement-breakpoint
COMMENT ON FUNCTION "workforce"."check_run_fence"(text, text, bigint) IS 'Fails (SQLSTATE WF409) unless the given token is the latest fence token of the company''s job; called first in each page transaction of a queued run.';--> statement-breakpoint
COMMENT ON TABLE "workforce"."run_fences" IS 'One row per company and job: the fence token, raised each time a run of the job takes its lock. Pages of a run whose token is not the latest are refused.';--> statement-breakpoint
COMMENT ON COLUMN "workforce"."run_fences"."company_key" IS 'The company the job runs for.';--> statement-breakpoint
COMMENT ON COLUMN "workforce"."run_fences"."job" IS 'The scheduled job (jobs/), e.g. shift-assignments.';--> statement-breakpoint
COMMENT ON COLUMN "workforce"."run_fences"."token" IS 'Raised by one each time a run takes the job''s lock; the run''s pages carry the value it got.';--> statement-breakpoint
COMMENT ON COLUMN "workforce"."run_fences"."holder" IS 'The queue job id of the run that took the latest token.';--> statement-breakpoint
COMMENT ON COLUMN "workforce"."run_fences"."taken_at" IS 'When the latest token was taken.';
