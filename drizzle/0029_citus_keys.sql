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
-- Which companies the role running the query reads, the defaults every company falls back to ('*': policies,
-- field classes) among them: the one place that says it, for the row-level security policies and the analyst
-- schema's masks. It runs with its owner's rights, so a role needs no privilege on access_grants; the role asked
-- about is the session's (SET ROLE's when set), never the owner's.
CREATE FUNCTION "workforce"."granted_companies"() RETURNS text[]
LANGUAGE sql STABLE SECURITY DEFINER SET search_path = pg_catalog, pg_temp AS $$
  SELECT array_append(coalesce(array_agg(g.company_key ORDER BY g.company_key), '{}'), '*')
  FROM "workforce"."access_grants" g
  WHERE g.role = coalesce(nullif(current_setting('role'), 'none'), session_user)
$$;
--> statement-breakpoint
COMMENT ON FUNCTION "workforce"."granted_companies"() IS 'The company keys the current role was granted (wfsync access grant), as access_grants holds them, and ''*'' (the defaults every role reads); only ''*'' for a role granted nothing. The row-level security policy of every table with a company_key reads it.';
--> statement-breakpoint
CREATE FUNCTION "workforce"."granted_personal_companies"() RETURNS text[]
LANGUAGE sql STABLE SECURITY DEFINER SET search_path = pg_catalog, pg_temp AS $$
  SELECT coalesce(array_agg(g.company_key ORDER BY g.company_key), '{}')
  FROM "workforce"."access_grants" g
  WHERE g.role = coalesce(nullif(current_setting('role'), 'none'), session_user) AND g.personal
$$;
--> statement-breakpoint
COMMENT ON FUNCTION "workforce"."granted_personal_companies"() IS 'The company keys the current role was granted with personal data (wfsync access grant --personal): the analyst schema''s views show their personal columns, and mask them for the other companies.';
--> statement-breakpoint
-- Two plain reads and the rest over arrays: no join of the grants with field_classes, which on Citus is
-- distributed while the grants are a reference table.
CREATE FUNCTION "workforce"."granted_readable_fields"() RETURNS text[]
LANGUAGE plpgsql STABLE SECURITY DEFINER SET search_path = pg_catalog, pg_temp AS $$
DECLARE
  mine text[] := array(SELECT g.company_key FROM "workforce"."access_grants" g
                       WHERE g.role = coalesce(nullif(current_setting('role'), 'none'), session_user));
  classes jsonb;
BEGIN
  SELECT jsonb_agg(jsonb_build_array(c.company_key, c.field, c.class)) INTO classes
  FROM "workforce"."field_classes" c WHERE c.company_key = any (mine || '*'::text);
  RETURN array(
    SELECT k || chr(31) || (x->>1) FROM unnest(mine) k, jsonb_array_elements(coalesce(classes, '[]')) x
    WHERE x->>0 IN (k, '*')
    GROUP BY k, x->>1
    HAVING (array_agg(x->>2 ORDER BY x->>0 = '*'))[1] = 'not-personal');
END
$$;
--> statement-breakpoint
COMMENT ON FUNCTION "workforce"."granted_readable_fields"() IS 'For each company the current role was granted, the fields of _extra whose class (the company''s own, else the default''s) is not personal, as company key, chr(31), field: what the analyst schema''s views keep of _extra for a company granted without personal data.';
--> statement-breakpoint
CREATE FUNCTION "workforce"."readable_extra"(p_extra jsonb, p_company text, p_readable text[]) RETURNS jsonb
LANGUAGE sql IMMUTABLE AS $$
  SELECT jsonb_object_agg(e.key, e.value) FROM jsonb_each(p_extra) e WHERE p_company || chr(31) || e.key = any (p_readable)
$$;
--> statement-breakpoint
COMMENT ON FUNCTION "workforce"."readable_extra"(jsonb, text, text[]) IS 'The fields of a company''s _extra that p_readable (granted_readable_fields()) names; null when none: what a role granted the company without personal data reads of it. A function rather than a subquery in the view, which Citus would not run beside a set-returning function.';
