ALTER TABLE "workforce"."companies" ADD COLUMN "streams_off" text[] DEFAULT '{}' NOT NULL;
--> statement-breakpoint
COMMENT ON COLUMN "workforce"."companies"."streams_off" IS 'Streams the company does not want in the warehouse (wfsync companies streams KEY --off): no request is sent for them and no run is scheduled; a stream others read is off only with them.';
