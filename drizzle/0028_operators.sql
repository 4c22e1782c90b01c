CREATE TABLE "workforce"."audit" (
	"id" bigint PRIMARY KEY GENERATED ALWAYS AS IDENTITY (sequence name "workforce"."audit_id_seq" INCREMENT BY 1 MINVALUE 1 MAXVALUE 9223372036854775807 START WITH 1 CACHE 1),
	"at" timestamp with time zone DEFAULT now() NOT NULL,
	"actor" text NOT NULL,
	"action" text NOT NULL,
	"company_key" text,
	"target" text,
	"outcome" text NOT NULL,
	"reason" text,
	CONSTRAINT "audit_outcome" CHECK ("workforce"."audit"."outcome" in ('started', 'done', 'refused', 'failed'))
);
--> statement-breakpoint
CREATE TABLE "workforce"."sessions" (
	"session_hash" text PRIMARY KEY NOT NULL,
	"actor" text NOT NULL,
	"role" text NOT NULL,
	"signed_in_at" timestamp with time zone DEFAULT now() NOT NULL,
	"used_at" timestamp with time zone DEFAULT now() NOT NULL,
	CONSTRAINT "sessions_role" CHECK ("workforce"."sessions"."role" in ('viewer', 'operator', 'admin'))
);
--> statement-breakpoint
CREATE TABLE "workforce"."sign_ins" (
	"state_hash" text PRIMARY KEY NOT NULL,
	"nonce" text NOT NULL,
	"code_verifier" text NOT NULL,
	"started_at" timestamp with time zone DEFAULT now() NOT NULL
);
--> statement-breakpoint
CREATE TABLE "workforce"."api_tokens" (
	"name" text PRIMARY KEY NOT NULL,
	"token_hash" text NOT NULL,
	"scopes" text[] NOT NULL,
	"companies" text[] DEFAULT '{}' NOT NULL,
	"created_at" timestamp with time zone DEFAULT now() NOT NULL,
	"created_by" text NOT NULL,
	"last_used_at" timestamp with time zone,
	CONSTRAINT "api_tokens_token_hash_unique" UNIQUE("token_hash"),
	CONSTRAINT "api_tokens_scopes" CHECK (cardinality("workforce"."api_tokens"."scopes") > 0 and "workforce"."api_tokens"."scopes" <@ array['push', 'read', 'admin']::text[])
);
--> statement-breakpoint
ALTER TABLE "workforce"."events" ADD COLUMN "actor" text;
--> statement-breakpoint
CREATE INDEX "audit_at_index" ON "workforce"."audit" USING btree ("at");
--> statement-breakpoint
CREATE INDEX "sessions_used_at_index" ON "workforce"."sessions" USING btree ("used_at");
--> statement-breakpoint
COMMENT ON TABLE "workforce"."audit" IS 'Every change an operator, an API token or the housekeeping made, from the CLI, a page or the API (wfsync audit): when, who, what, to which company and with what outcome; never a personal value.';
--> statement-breakpoint
COMMENT ON COLUMN "workforce"."audit"."id" IS 'Generated id.';
--> statement-breakpoint
COMMENT ON COLUMN "workforce"."audit"."at" IS 'When the change was asked for. An instant: the source''s UTC offset is normalized away.';
--> statement-breakpoint
COMMENT ON COLUMN "workforce"."audit"."actor" IS 'Who: oidc:<e-mail or subject> (signed in through the identity provider), token:<name> (an API token, or the dashboard token), cli:<operating-system user>, or system (the housekeeping).';
--> statement-breakpoint
COMMENT ON COLUMN "workforce"."audit"."action" IS 'What, in the CLI''s words (see AUDIT_ACTIONS in src/warehouse/audit.ts): companies add, personal-data set, erase, access grant, resync, push, tokens create, sign-in, ...';
--> statement-breakpoint
COMMENT ON COLUMN "workforce"."audit"."company_key" IS 'The company the change was to; null for what concerns no one company (a token, a sign-in).';
--> statement-breakpoint
COMMENT ON COLUMN "workforce"."audit"."target" IS 'What in the company: a stream, a role, a field list, a ServiceId, a token, change ids; never a personal value.';
--> statement-breakpoint
COMMENT ON COLUMN "workforce"."audit"."outcome" IS 'started (no outcome recorded yet, or the process ended first), done, refused (the reason says why) or failed (an unexpected error; the log has it).';
--> statement-breakpoint
COMMENT ON COLUMN "workforce"."audit"."reason" IS 'Why it was refused or failed; null when done.';
--> statement-breakpoint
COMMENT ON TABLE "workforce"."sessions" IS 'Dashboard sessions, shared by every ops server of the warehouse: a hash of the session cookie''s id, who signed in, their role, and when; a row deleted is a session ended everywhere.';
--> statement-breakpoint
COMMENT ON COLUMN "workforce"."sessions"."session_hash" IS 'SHA-256 (base64url) of the session cookie''s random id: the cookie cannot be made from it.';
--> statement-breakpoint
COMMENT ON COLUMN "workforce"."sessions"."actor" IS 'Who signed in: oidc:<e-mail or subject>, or token:dashboard (WFS_DASHBOARD_TOKEN).';
--> statement-breakpoint
COMMENT ON COLUMN "workforce"."sessions"."role" IS 'viewer (reads every page), operator (also runs, re-syncs, pauses and resumes, retries pushes, runs push models) or admin (everything).';
--> statement-breakpoint
COMMENT ON COLUMN "workforce"."sessions"."signed_in_at" IS 'When the session began; it ends WFS_SESSION_MAX_HOURS after. An instant: the source''s UTC offset is normalized away.';
--> statement-breakpoint
COMMENT ON COLUMN "workforce"."sessions"."used_at" IS 'When the session was last used (to the minute); it ends WFS_SESSION_IDLE_MINUTES after. An instant: the source''s UTC offset is normalized away.';
--> statement-breakpoint
COMMENT ON TABLE "workforce"."sign_ins" IS 'Sign-ins through the identity provider under way: each waits for its callback for ten minutes at most, and is deleted when it comes (a replayed callback finds nothing).';
--> statement-breakpoint
COMMENT ON COLUMN "workforce"."sign_ins"."state_hash" IS 'SHA-256 (base64url) of the state sent to the identity provider.';
--> statement-breakpoint
COMMENT ON COLUMN "workforce"."sign_ins"."nonce" IS 'The nonce the ID token must carry.';
--> statement-breakpoint
COMMENT ON COLUMN "workforce"."sign_ins"."code_verifier" IS 'The PKCE code verifier the authorization code is redeemed with.';
--> statement-breakpoint
COMMENT ON COLUMN "workforce"."sign_ins"."started_at" IS 'When the sign-in was sent to the identity provider. An instant: the source''s UTC offset is normalized away.';
--> statement-breakpoint
COMMENT ON TABLE "workforce"."api_tokens" IS 'Named API tokens (wfsync tokens): the scopes and companies each may act on; the token itself is stored only as a hash. A token deleted is refused at once by every server.';
--> statement-breakpoint
COMMENT ON COLUMN "workforce"."api_tokens"."name" IS 'The token''s name, as the audit''s actor token:<name> gives it.';
--> statement-breakpoint
COMMENT ON COLUMN "workforce"."api_tokens"."token_hash" IS 'SHA-256 (base64url) of the token: it cannot be read back.';
--> statement-breakpoint
COMMENT ON COLUMN "workforce"."api_tokens"."scopes" IS 'What it may do: push (push and dry-run changes), read (push status, timelines, usage and events), admin (companies, personal data, erasures, access, the audit).';
--> statement-breakpoint
COMMENT ON COLUMN "workforce"."api_tokens"."companies" IS 'The companies it may act on; empty: every company.';
--> statement-breakpoint
COMMENT ON COLUMN "workforce"."api_tokens"."created_at" IS 'When the token was made. An instant: the source''s UTC offset is normalized away.';
--> statement-breakpoint
COMMENT ON COLUMN "workforce"."api_tokens"."created_by" IS 'Who made it (an audit actor).';
--> statement-breakpoint
COMMENT ON COLUMN "workforce"."api_tokens"."last_used_at" IS 'When a request last used it (to the minute); null: never. An instant: the source''s UTC offset is normalized away.';
--> statement-breakpoint
COMMENT ON COLUMN "workforce"."events"."actor" IS 'Who made the change (the audit''s actor: oidc:<e-mail or subject>, token:<name>, cli:<user> or system); null for what the sync itself saw.';
