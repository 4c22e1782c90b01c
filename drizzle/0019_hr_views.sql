-- The HR analyst's views: headcount by day, hires and exits, hours per week, credential compliance, time off and
-- course completion. Each reads its tables once and aggregates set-wise; v_credential_compliance joins each
-- requirement to its credential versions once, before the 13 days it is judged on multiply the rows.
CREATE VIEW "workforce"."v_headcount_daily" AS
WITH spans AS (
  -- A version counts on each day it was current at the day's end (session time zone): from the day it was
  -- first synced up to the day it was replaced or deleted.
  SELECT h.company_key, h.department, h.job_title, h.status, h.is_employee = 1 AS is_employee,
         h.valid_from::date AS from_day, h.valid_to::date AS to_day
  FROM "workforce"."individuals_history" h
  WHERE h.valid_to IS NULL OR h.valid_to::date > h.valid_from::date
), moves AS (
  SELECT company_key, department, job_title, status, is_employee, day, sum(delta)::int AS delta
  FROM (SELECT s.company_key, s.department, s.job_title, s.status, s.is_employee, s.from_day AS day, 1 AS delta FROM spans s
        UNION ALL
        SELECT s.company_key, s.department, s.job_title, s.status, s.is_employee, s.to_day, -1 FROM spans s WHERE s.to_day IS NOT NULL) m
  GROUP BY company_key, department, job_title, status, is_employee, day
), groups AS (
  SELECT company_key, department, job_title, status, is_employee, min(day) AS first_day
  FROM moves GROUP BY company_key, department, job_title, status, is_employee
), daily AS (
  SELECT g.company_key, g.department, g.job_title, g.status, g.is_employee, d.day::date AS day,
         sum(coalesce(m.delta, 0)) OVER (PARTITION BY g.company_key, g.department, g.job_title, g.status, g.is_employee ORDER BY d.day)::int AS headcount
  FROM groups g
  CROSS JOIN LATERAL generate_series(g.first_day, greatest(g.first_day, current_date), interval '1 day') d(day)
  LEFT JOIN moves m ON m.company_key = g.company_key AND m.day = d.day::date
   AND m.department IS NOT DISTINCT FROM g.department AND m.job_title IS NOT DISTINCT FROM g.job_title
   AND m.status IS NOT DISTINCT FROM g.status AND m.is_employee IS NOT DISTINCT FROM g.is_employee
)
SELECT company_key, day, department, job_title, status, is_employee, headcount
FROM daily
WHERE headcount > 0;
--> statement-breakpoint
CREATE VIEW "workforce"."v_hires_and_exits_monthly" AS
WITH hires AS (
  SELECT i.company_key, i.department, date_trunc('month', i.hire_date)::date AS month, count(*)::int AS hires
  FROM "workforce"."individuals" i
  WHERE i._deleted_at IS NULL AND i.hire_date IS NOT NULL
  GROUP BY i.company_key, i.department, date_trunc('month', i.hire_date)::date
), exits AS (
  -- An exit is a version that says Former after one that did not; a person first synced as Former left before
  -- the history began, on a day nobody recorded.
  SELECT h.company_key, h.department, date_trunc('month', h.valid_from)::date AS month, count(*)::int AS exits
  FROM "workforce"."individuals_history" h
  JOIN "workforce"."individuals_history" p ON p.company_key = h.company_key AND p.service_id = h.service_id AND p.valid_to = h.valid_from
  WHERE h.status = 'Former' AND p.status IS DISTINCT FROM 'Former'
  GROUP BY h.company_key, h.department, date_trunc('month', h.valid_from)::date
)
SELECT company_key, month, department, sum(hires)::int AS hires, sum(exits)::int AS exits
FROM (SELECT company_key, month, department, hires, 0 AS exits FROM hires
      UNION ALL
      SELECT company_key, month, department, 0, exits FROM exits) m
GROUP BY company_key, month, department;
--> statement-breakpoint
CREATE VIEW "workforce"."v_hours_weekly" AS
SELECT a.company_key, a.assignee_service_id AS service_id,
       min(a.assignee_employee_number) AS employee_number, min(a.assignee_first_name) AS first_name, min(a.assignee_last_name) AS last_name,
       date_trunc('week', coalesce(a.start_date_time_local_date, a.start_date_time::date))::date AS week,
       count(*)::int AS shifts,
       round(sum(extract(epoch FROM a.end_date_time - a.start_date_time)) / 3600, 2) AS scheduled_hours,
       round(coalesce(sum(extract(epoch FROM a.clock_out_date_time - a.clock_in_date_time)), 0) / 3600, 2) AS worked_hours,
       round(greatest(coalesce(sum(extract(epoch FROM a.clock_out_date_time - a.clock_in_date_time)), 0) / 3600 - 40, 0), 2) AS overtime_hours
FROM "workforce"."shift_assignments" a
WHERE a._deleted_at IS NULL AND a.assignee_service_id IS NOT NULL
GROUP BY a.company_key, a.assignee_service_id, date_trunc('week', coalesce(a.start_date_time_local_date, a.start_date_time::date))::date;
--> statement-breakpoint
CREATE VIEW "workforce"."v_credential_compliance" AS
WITH required AS (
  SELECT DISTINCT r.company_key, r.employment_service_id AS service_id, r.job_title_job_title_id AS job_title_id,
         r.job_title_job_title_name AS job_title_name, r.requirement, lower(r.requirement) AS requirement_name,
         lower(coalesce(r.fulfilling_certification_certification_name, r.requirement)) AS fulfilling_name
  FROM "workforce"."required_certification_requirements" r
  JOIN "workforce"."required_certification_status" s ON s.company_key = r.company_key AND s.employment_service_id = r.employment_service_id
  WHERE r._deleted_at IS NULL AND s._deleted_at IS NULL AND r.requirement IS NOT NULL
), dates AS (
  SELECT current_date AS as_of, 'today'::text AS period
  UNION ALL
  SELECT (date_trunc('month', current_date) - make_interval(months => n) - interval '1 day')::date, 'month'
  FROM generate_series(0, 11) n
), versions AS (
  -- The first version synced stands for all time before it: history starts when syncing started.
  SELECT h.company_key, h.service_id, lower(h.certification_name) AS certification_name, h.activation_date, h.expiration_date,
         CASE WHEN h.valid_from = min(h.valid_from) OVER (PARTITION BY h.company_key, h.individual_certification_id)
              THEN '-infinity'::timestamptz ELSE h.valid_from END AS known_from, h.valid_to
  FROM "workforce"."individual_certifications_history" h
  WHERE h.is_deleted IS NOT TRUE
), coverage AS (
  -- Each requirement with the credential versions that may meet it, joined once before the dates multiply it.
  SELECT q.company_key, q.service_id, q.job_title_id, q.job_title_name, q.requirement,
         v.activation_date, v.expiration_date, v.known_from, v.valid_to, v.certification_name IS NOT NULL AS matched
  FROM required q
  LEFT JOIN versions v ON v.company_key = q.company_key AND v.service_id = q.service_id
   AND v.certification_name IN (q.requirement_name, q.fulfilling_name)
), judged AS (
  SELECT c.company_key, c.service_id, c.job_title_id, c.job_title_name, c.requirement, d.as_of, d.period,
         bool_or(c.matched AND c.known_from < d.as_of + 1 AND (c.valid_to IS NULL OR c.valid_to >= d.as_of + 1)
                 AND coalesce(c.activation_date <= d.as_of, true) AND coalesce(c.expiration_date >= d.as_of, true)) AS current
  FROM coverage c
  CROSS JOIN dates d
  GROUP BY c.company_key, c.service_id, c.job_title_id, c.job_title_name, c.requirement, d.as_of, d.period
)
SELECT j.company_key, j.period, j.as_of, i.department, j.job_title_id, j.job_title_name,
       count(*)::int AS required, count(*) FILTER (WHERE j.current)::int AS current,
       round(count(*) FILTER (WHERE j.current)::numeric / count(*), 4) AS share_current
FROM judged j
LEFT JOIN "workforce"."individuals" i ON i.company_key = j.company_key AND i.service_id = j.service_id AND i._deleted_at IS NULL
GROUP BY j.company_key, j.period, j.as_of, i.department, j.job_title_id, j.job_title_name;
--> statement-breakpoint
CREATE VIEW "workforce"."v_time_off_monthly" AS
WITH requested AS (
  SELECT r.company_key, r.requested_leave_type AS leave_type,
         date_trunc('month', coalesce(r.start_date_time_local_date, r.start_date_time::date))::date AS month,
         count(*)::int AS requests, coalesce(sum(r.requested_hours), 0) AS requested_hours
  FROM "workforce"."time_off_requests" r
  WHERE r._deleted_at IS NULL
  GROUP BY 1, 2, 3
), approved AS (
  SELECT r.company_key, h.approved_leave_type AS leave_type,
         date_trunc('month', coalesce(r.start_date_time_local_date, r.start_date_time::date))::date AS month,
         count(DISTINCT r._key)::int AS approved_requests, coalesce(sum(h.approved_hours), 0) AS approved_hours
  FROM "workforce"."time_off_requests" r
  JOIN "workforce"."time_off_approved_hours" h ON h.company_key = r.company_key AND h.time_off_request_key = r._key
  WHERE r._deleted_at IS NULL AND h._deleted_at IS NULL AND r.status = 'Approved'
  GROUP BY 1, 2, 3
)
SELECT company_key, month, leave_type, sum(requests)::int AS requests, sum(requested_hours) AS requested_hours,
       sum(approved_requests)::int AS approved_requests, sum(approved_hours) AS approved_hours
FROM (SELECT company_key, month, leave_type, requests, requested_hours, 0 AS approved_requests, 0 AS approved_hours FROM requested
      UNION ALL
      SELECT company_key, month, leave_type, 0, 0, approved_requests, approved_hours FROM approved) m
GROUP BY company_key, month, leave_type;
--> statement-breakpoint
CREATE VIEW "workforce"."v_course_completion" AS
SELECT c.company_key, c.course_name, date_trunc('month', c.start_date)::date AS month,
       count(*)::int AS attempts,
       count(*) FILTER (WHERE c.status IN ('Passed', 'Approved'))::int AS completions,
       round(count(*) FILTER (WHERE c.status IN ('Passed', 'Approved'))::numeric / count(*), 4) AS share_completed
FROM "workforce"."individual_courses" c
WHERE c._deleted_at IS NULL AND c.start_date IS NOT NULL
GROUP BY c.company_key, c.course_name, date_trunc('month', c.start_date)::date;
--> statement-breakpoint
COMMENT ON VIEW "workforce"."v_headcount_daily" IS 'People by day, department, job title, status and employee or not, from individuals_history: a version counts on each day it was current at the day''s end (days of the session time zone), from the day it was first synced; days before the first sync are not known. Only groups with someone in them.';
--> statement-breakpoint
COMMENT ON COLUMN "workforce"."v_headcount_daily"."company_key" IS 'Key of the company account this row was synced from; part of every key.';
--> statement-breakpoint
COMMENT ON COLUMN "workforce"."v_headcount_daily"."day" IS 'The day (session time zone) at whose end the people are counted.';
--> statement-breakpoint
COMMENT ON COLUMN "workforce"."v_headcount_daily"."department" IS 'Department of the people counted.';
--> statement-breakpoint
COMMENT ON COLUMN "workforce"."v_headcount_daily"."job_title" IS 'Job title of the people counted.';
--> statement-breakpoint
COMMENT ON COLUMN "workforce"."v_headcount_daily"."status" IS 'Status of the people counted (Active, LOA, Former).';
--> statement-breakpoint
COMMENT ON COLUMN "workforce"."v_headcount_daily"."is_employee" IS 'True for employees, false for others (volunteers, contractors).';
--> statement-breakpoint
COMMENT ON COLUMN "workforce"."v_headcount_daily"."headcount" IS 'Number of individuals in the group at the end of the day.';
--> statement-breakpoint
COMMENT ON VIEW "workforce"."v_hires_and_exits_monthly" IS 'Hires (by the service''s hire date) and exits (a version of individuals_history saying Former after one that did not, in the month it was synced) by department and month. A person first synced as Former left before the history began and is not counted.';
--> statement-breakpoint
COMMENT ON COLUMN "workforce"."v_hires_and_exits_monthly"."company_key" IS 'Key of the company account this row was synced from; part of every key.';
--> statement-breakpoint
COMMENT ON COLUMN "workforce"."v_hires_and_exits_monthly"."month" IS 'First day of the month.';
--> statement-breakpoint
COMMENT ON COLUMN "workforce"."v_hires_and_exits_monthly"."department" IS 'Department of the person: today''s for hires, at the exit for exits.';
--> statement-breakpoint
COMMENT ON COLUMN "workforce"."v_hires_and_exits_monthly"."hires" IS 'Individuals whose hire date falls in the month.';
--> statement-breakpoint
COMMENT ON COLUMN "workforce"."v_hires_and_exits_monthly"."exits" IS 'Individuals who became Former in the month.';
--> statement-breakpoint
COMMENT ON VIEW "workforce"."v_hours_weekly" IS 'Per person and week (Monday first, by the local date the service gave for the shift start): shifts, scheduled hours (start to end of the assigned shifts) against worked hours (clock-in to clock-out), and overtime past 40 worked hours.';
--> statement-breakpoint
COMMENT ON COLUMN "workforce"."v_hours_weekly"."company_key" IS 'Key of the company account this row was synced from; part of every key.';
--> statement-breakpoint
COMMENT ON COLUMN "workforce"."v_hours_weekly"."service_id" IS 'ServiceId: the service''s unique numeric person identifier.';
--> statement-breakpoint
COMMENT ON COLUMN "workforce"."v_hours_weekly"."employee_number" IS 'Employee number of the assignee.';
--> statement-breakpoint
COMMENT ON COLUMN "workforce"."v_hours_weekly"."first_name" IS 'First name of the assignee.';
--> statement-breakpoint
COMMENT ON COLUMN "workforce"."v_hours_weekly"."last_name" IS 'Last name of the assignee.';
--> statement-breakpoint
COMMENT ON COLUMN "workforce"."v_hours_weekly"."week" IS 'Monday of the week of the shift start, as the service wrote it (start_date_time_local_date).';
--> statement-breakpoint
COMMENT ON COLUMN "workforce"."v_hours_weekly"."shifts" IS 'Shift assignments of the person in the week.';
--> statement-breakpoint
COMMENT ON COLUMN "workforce"."v_hours_weekly"."scheduled_hours" IS 'Hours from start to end of the assigned shifts.';
--> statement-breakpoint
COMMENT ON COLUMN "workforce"."v_hours_weekly"."worked_hours" IS 'Hours from clock-in to clock-out of the shifts with both.';
--> statement-breakpoint
COMMENT ON COLUMN "workforce"."v_hours_weekly"."overtime_hours" IS 'Worked hours past 40 in the week.';
--> statement-breakpoint
COMMENT ON VIEW "workforce"."v_credential_compliance" IS 'Per department and job title, the share of required credentials (required_certification_requirements of the people the required-status list names) that are current: today, and at the end of each of the last 12 months. A requirement is current on a day when a credential of the person named as the requirement or its fulfilling credential, in the version known that day (individual_certifications_history; the earliest version stands for all time before it), was active and not expired.';
--> statement-breakpoint
COMMENT ON COLUMN "workforce"."v_credential_compliance"."company_key" IS 'Key of the company account this row was synced from; part of every key.';
--> statement-breakpoint
COMMENT ON COLUMN "workforce"."v_credential_compliance"."period" IS 'today (as of the current date) or month (as of the last day of a month).';
--> statement-breakpoint
COMMENT ON COLUMN "workforce"."v_credential_compliance"."as_of" IS 'The day the requirements are judged on.';
--> statement-breakpoint
COMMENT ON COLUMN "workforce"."v_credential_compliance"."department" IS 'Department of the people (today''s).';
--> statement-breakpoint
COMMENT ON COLUMN "workforce"."v_credential_compliance"."job_title_id" IS 'Id of the job title.';
--> statement-breakpoint
COMMENT ON COLUMN "workforce"."v_credential_compliance"."job_title_name" IS 'Job title name.';
--> statement-breakpoint
COMMENT ON COLUMN "workforce"."v_credential_compliance"."required" IS 'Requirements of the people of the department and job title.';
--> statement-breakpoint
COMMENT ON COLUMN "workforce"."v_credential_compliance"."current" IS 'Of those, the requirements met by a current credential.';
--> statement-breakpoint
COMMENT ON COLUMN "workforce"."v_credential_compliance"."share_current" IS 'current / required.';
--> statement-breakpoint
COMMENT ON VIEW "workforce"."v_time_off_monthly" IS 'Time off per leave type and month of the request start (by the local date the service gave): requests and hours requested (by requested leave type), approved requests and hours approved (by approved leave type).';
--> statement-breakpoint
COMMENT ON COLUMN "workforce"."v_time_off_monthly"."company_key" IS 'Key of the company account this row was synced from; part of every key.';
--> statement-breakpoint
COMMENT ON COLUMN "workforce"."v_time_off_monthly"."month" IS 'First day of the month of the request start.';
--> statement-breakpoint
COMMENT ON COLUMN "workforce"."v_time_off_monthly"."leave_type" IS 'Leave type: requested for the requested figures, approved for the approved ones.';
--> statement-breakpoint
COMMENT ON COLUMN "workforce"."v_time_off_monthly"."requests" IS 'Requests of the leave type.';
--> statement-breakpoint
COMMENT ON COLUMN "workforce"."v_time_off_monthly"."requested_hours" IS 'Hours requested.';
--> statement-breakpoint
COMMENT ON COLUMN "workforce"."v_time_off_monthly"."approved_requests" IS 'Approved requests with hours of the leave type.';
--> statement-breakpoint
COMMENT ON COLUMN "workforce"."v_time_off_monthly"."approved_hours" IS 'Hours approved.';
--> statement-breakpoint
COMMENT ON VIEW "workforce"."v_course_completion" IS 'Course attempts, completions (status Passed or Approved) and the share completed, per course and month of the course start.';
--> statement-breakpoint
COMMENT ON COLUMN "workforce"."v_course_completion"."company_key" IS 'Key of the company account this row was synced from; part of every key.';
--> statement-breakpoint
COMMENT ON COLUMN "workforce"."v_course_completion"."course_name" IS 'Course name.';
--> statement-breakpoint
COMMENT ON COLUMN "workforce"."v_course_completion"."month" IS 'First day of the month of the course start.';
--> statement-breakpoint
COMMENT ON COLUMN "workforce"."v_course_completion"."attempts" IS 'Course records started in the month.';
--> statement-breakpoint
COMMENT ON COLUMN "workforce"."v_course_completion"."completions" IS 'Of those, the ones passed or approved.';
--> statement-breakpoint
COMMENT ON COLUMN "workforce"."v_course_completion"."share_completed" IS 'completions / attempts.';