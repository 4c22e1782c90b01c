-- The grants' functions in PL/pgSQL: it keeps the plan of its query for the session, where a SQL function with a
-- SET clause (never inlined) plans its query again at every call. Every table a masked role's query reads calls
-- granted_companies() once, and every personal column it reads granted_personal_companies() once.
-- And PARALLEL SAFE, as they are (they read tables and the session's role, and change nothing): a query calling a
-- function marked unsafe, the default, never runs in parallel, so a masked role's large views ran on one core
-- where the owner's ran on several.
CREATE OR REPLACE FUNCTION "workforce"."granted_companies"() RETURNS text[]
LANGUAGE plpgsql STABLE PARALLEL SAFE SECURITY DEFINER SET search_path = pg_catalog, pg_temp AS $$
BEGIN
  RETURN (SELECT array_append(coalesce(array_agg(g.company_key ORDER BY g.company_key), '{}'), '*')
          FROM "workforce"."access_grants" g
          WHERE g.role = coalesce(nullif(current_setting('role'), 'none'), session_user));
END
$$;
--> statement-breakpoint
CREATE OR REPLACE FUNCTION "workforce"."granted_personal_companies"() RETURNS text[]
LANGUAGE plpgsql STABLE PARALLEL SAFE SECURITY DEFINER SET search_path = pg_catalog, pg_temp AS $$
BEGIN
  RETURN (SELECT coalesce(array_agg(g.company_key ORDER BY g.company_key), '{}')
          FROM "workforce"."access_grants" g
          WHERE g.role = coalesce(nullif(current_setting('role'), 'none'), session_user) AND g.personal);
END
$$;
--> statement-breakpoint
ALTER FUNCTION "workforce"."granted_readable_fields"() PARALLEL SAFE;
--> statement-breakpoint
ALTER FUNCTION "workforce"."readable_extra"(jsonb, text, text[]) PARALLEL SAFE;
