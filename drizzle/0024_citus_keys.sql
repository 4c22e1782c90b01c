ALTER TABLE "workforce"."sync_runs" DROP CONSTRAINT "sync_runs_pkey";--> statement-breakpoint
ALTER TABLE "workforce"."sync_runs" ADD CONSTRAINT "sync_runs_company_key_id_pk" PRIMARY KEY("company_key","id");--> statement-breakpoint
ALTER TABLE "workforce"."sync_rejects" DROP CONSTRAINT "sync_rejects_pkey";--> statement-breakpoint
ALTER TABLE "workforce"."sync_rejects" ADD CONSTRAINT "sync_rejects_company_key_id_pk" PRIMARY KEY("company_key","id");--> statement-breakpoint
ALTER TABLE "workforce"."events" DROP CONSTRAINT "events_pkey";--> statement-breakpoint
ALTER TABLE "workforce"."events" ADD CONSTRAINT "events_company_key_id_pk" PRIMARY KEY("company_key","id");--> statement-breakpoint
ALTER TABLE "workforce"."resync_requests" DROP CONSTRAINT "resync_requests_pkey";--> statement-breakpoint
ALTER TABLE "workforce"."resync_requests" ADD CONSTRAINT "resync_requests_company_key_id_pk" PRIMARY KEY("company_key","id");--> statement-breakpoint
ALTER TABLE "workforce"."push_outbox" DROP CONSTRAINT "push_outbox_pkey";--> statement-breakpoint
ALTER TABLE "workforce"."push_outbox" ADD CONSTRAINT "push_outbox_company_key_id_pk" PRIMARY KEY("company_key","id");--> statement-breakpoint
ALTER TABLE "workforce"."push_model_runs" DROP CONSTRAINT "push_model_runs_pkey";--> statement-breakpoint
ALTER TABLE "workforce"."push_model_runs" ADD CONSTRAINT "push_model_runs_company_key_id_pk" PRIMARY KEY("company_key","id");--> statement-breakpoint
ALTER TABLE "workforce"."erasures" DROP CONSTRAINT "erasures_pkey";--> statement-breakpoint
ALTER TABLE "workforce"."erasures" ADD CONSTRAINT "erasures_company_key_id_pk" PRIMARY KEY("company_key","id");--> statement-breakpoint
-- Which companies the role running the query reads: the one place that says it, for the row-level security
-- policies and anything else that filters by grant. It runs with its owner's rights, so a role needs no
-- privilege on access_grants; the role asked about is the session's (SET ROLE's when set), never the owner's.
CREATE FUNCTION "workforce"."granted_companies"() RETURNS text[]
LANGUAGE sql STABLE SECURITY DEFINER SET search_path = pg_catalog, pg_temp AS $$
  SELECT coalesce(array_agg(g.company_key ORDER BY g.company_key), '{}')
  FROM "workforce"."access_grants" g
  WHERE g.role = coalesce(nullif(current_setting('role'), 'none'), session_user)
$$;
--> statement-breakpoint
COMMENT ON FUNCTION "workforce"."granted_companies"() IS 'The company keys the current role was granted (wfsync access grant), as access_grants holds them; empty for a role granted nothing. The row-level security policy of every table with a company_key reads it.';
--> statement-breakpoint
DO $$
DECLARE t regclass;
BEGIN
  FOR t IN SELECT p.polrelid::regclass FROM pg_policy p JOIN pg_class c ON c.oid = p.polrelid
           WHERE p.polname = 'company_access' AND c.relnamespace = '"workforce"'::regnamespace AND c.relname <> 'access_grants'
  LOOP
    EXECUTE format('ALTER POLICY company_access ON %s USING (company_key = any ((select "workforce".granted_companies())::text[]))', t);
  END LOOP;
END
$$;
