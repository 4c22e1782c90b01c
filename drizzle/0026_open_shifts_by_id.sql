CREATE OR REPLACE VIEW "workforce"."v_open_shifts" AS
SELECT a.company_key, a.schedule_id, a.schedule_name, coalesce(a.start_date_time_local_date, a.start_date_time::date) AS day,
       count(*)::int AS open_shifts,
       string_agg(DISTINCT a.shift_name, ', ') AS shift_names
FROM "workforce"."shift_assignments" a
WHERE a._deleted_at IS NULL
  AND a.assignee_service_id IS NULL AND a.type IS DISTINCT FROM 'Ride Along'
GROUP BY a.company_key, a.schedule_id, a.schedule_name, coalesce(a.start_date_time_local_date, a.start_date_time::date);
--> statement-breakpoint
COMMENT ON VIEW "workforce"."v_open_shifts" IS 'Open shifts (no employee assigned) by schedule and day, told by the assignee''s ServiceId alone so that every role counts the same; a ride-along seat is not a shift to fill. The day is the local date the service gave for the shift start.';
