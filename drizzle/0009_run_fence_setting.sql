-- The fence check also names, for the rest of the page's transaction, the run that writes the page
-- (`wfsync.run_fence` = '<job>:<token>'), so a trigger or an audit in that transaction can tell which run of a
-- job wrote what, and that a run fenced off wrote nothing after a later run took the lock.
CREATE OR REPLACE FUNCTION "workforce"."check_run_fence"(p_company text, p_job text, p_token bigint) RETURNS void
LANGUAGE plpgsql AS $$
BEGIN
  PERFORM 1 FROM "workforce"."run_fences" WHERE company_key = p_company AND job = p_job AND token = p_token FOR SHARE;
  IF NOT FOUND THEN
    RAISE EXCEPTION 'run of job % for company % was fenced off: it lost its lock and a later run holds it', p_job, p_company
      USING ERRCODE = 'WF409';
  END IF;
  PERFORM set_config('wfsync.run_fence', p_job || ':' || p_token, true);
END
$$;--> statement-breakpoint
COMMENT ON FUNCTION "workforce"."check_run_fence"(text, text, bigint) IS 'Fails (SQLSTATE WF409) unless the given token is the latest fence token of the company''s job; called first in each page transaction of a queued run. On success sets wfsync.run_fence to ''<job>:<token>'' for the rest of the transaction.';
