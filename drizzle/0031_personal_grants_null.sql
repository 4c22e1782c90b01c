-- Null, not an empty array, for a role granted no company with personal data. Every personal column a masked role
-- reads is `company_key = any (granted_personal_companies())`, its array an InitPlan's: against an empty array
-- Postgres copies the array out of the InitPlan's tuple for every row and column before finding no element, while
-- against null it answers null at once, and the mask reads null all the same.
CREATE OR REPLACE FUNCTION "workforce"."granted_personal_companies"() RETURNS text[]
LANGUAGE plpgsql STABLE PARALLEL SAFE SECURITY DEFINER SET search_path = pg_catalog, pg_temp AS $$
BEGIN
  RETURN (SELECT array_agg(g.company_key ORDER BY g.company_key)
          FROM "workforce"."access_grants" g
          WHERE g.role = coalesce(nullif(current_setting('role'), 'none'), session_user) AND g.personal);
END
$$;
--> statement-breakpoint
COMMENT ON FUNCTION "workforce"."granted_personal_companies"() IS 'The company keys the current role was granted with personal data (wfsync access grant --personal), null when none: the analyst schema''s views show their personal columns, and mask them for the other companies.';
