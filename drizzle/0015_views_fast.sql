-- v_shifts_without_current_credential, set-based: each requirement of a person is joined once to the credential
-- versions that may meet it (counting them), and each worked shift is then judged against that row in one hash
-- join. Only requirements met by several versions sort their shifts' candidates; before, every shift sorted and
-- windowed the company's whole credential history (a nested loop that did not answer at medium).
CREATE OR REPLACE VIEW "workforce"."v_shifts_without_current_credential" AS
WITH worked AS NOT MATERIALIZED (
  SELECT a.company_key, a.shift_assignment_id, a.schedule_id, a.schedule_name, a.shift_name,
         a.job_title_id, a.job_title_name, a.start_date_time, a.clock_in_date_time,
         a.assignee_service_id AS service_id, a.assignee_first_name AS first_name, a.assignee_last_name AS last_name,
         coalesce(a.start_date_time_local_date, a.start_date_time::date) AS shift_date
  FROM "workforce"."shift_assignments" a
  WHERE a._deleted_at IS NULL AND a.clock_in_date_time IS NOT NULL AND a.assignee_service_id IS NOT NULL
), required AS (
  SELECT DISTINCT r.company_key, r.employment_service_id AS service_id, r.job_title_job_title_id AS job_title_id, r.requirement,
         lower(r.requirement) AS requirement_name, lower(coalesce(r.fulfilling_certification_certification_name, r.requirement)) AS fulfilling_name
  FROM "workforce"."required_certification_requirements" r
  WHERE r._deleted_at IS NULL AND r.requirement IS NOT NULL AND r.job_title_job_title_id IS NOT NULL
), versions AS (
  -- The first version synced stands for all time before it: history starts when syncing started.
  SELECT h.company_key, h.service_id, h.individual_certification_id, lower(h.certification_name) AS certification_name,
         h.activation_date, h.expiration_date, h.valid_to,
         CASE WHEN h.valid_from = min(h.valid_from) OVER (PARTITION BY h.company_key, h.individual_certification_id)
              THEN '-infinity'::timestamptz ELSE h.valid_from END AS known_from
  FROM "workforce"."individual_certifications_history" h
  WHERE h.is_deleted IS NOT TRUE
), coverage AS (
  -- Each requirement of a person with every credential version that may meet it, and how many there are: the
  -- shifts of a requirement met by one version at most are judged row by row, without sorting.
  SELECT q.company_key, q.service_id, q.job_title_id, q.requirement, v.individual_certification_id,
         v.activation_date, v.expiration_date, v.known_from, v.valid_to,
         count(v.individual_certification_id) OVER (PARTITION BY q.company_key, q.service_id, q.job_title_id, q.requirement) AS versions
  FROM required q
  LEFT JOIN versions v ON v.company_key = q.company_key AND v.service_id = q.service_id
   AND v.certification_name IN (q.requirement_name, q.fulfilling_name)
), judged AS NOT MATERIALIZED (
  SELECT w.company_key, w.shift_assignment_id, w.schedule_id, w.schedule_name, w.shift_name, w.job_title_id, w.job_title_name,
         w.start_date_time, w.clock_in_date_time, w.shift_date, w.service_id, w.first_name, w.last_name, c.requirement, c.versions,
         c.individual_certification_id, c.activation_date, c.expiration_date,
         (c.known_from <= w.clock_in_date_time AND (c.valid_to IS NULL OR c.valid_to > w.clock_in_date_time)) IS TRUE AS known,
         (coalesce(c.activation_date <= w.shift_date, true) AND coalesce(c.expiration_date >= w.shift_date, true)) AS current
  FROM worked w
  JOIN coverage c ON c.company_key = w.company_key AND c.service_id = w.service_id AND c.job_title_id = w.job_title_id
), closest AS (
  SELECT j.* FROM judged j WHERE j.versions <= 1
  UNION ALL
  (SELECT DISTINCT ON (j.company_key, j.shift_assignment_id, j.requirement) j.*
   FROM judged j WHERE j.versions > 1
   ORDER BY j.company_key, j.shift_assignment_id, j.requirement, j.known DESC, (j.known AND j.current) DESC, j.expiration_date DESC NULLS FIRST)
)
SELECT c.company_key, c.shift_assignment_id, c.schedule_id, c.schedule_name, c.shift_name, c.job_title_id, c.job_title_name,
       c.start_date_time, c.clock_in_date_time, c.shift_date, c.service_id, c.first_name, c.last_name,
       c.requirement,
       CASE WHEN NOT c.known THEN 'Missing' WHEN c.expiration_date < c.shift_date THEN 'Expired' ELSE 'NotYetActive' END AS reason,
       CASE WHEN c.known THEN c.individual_certification_id END AS credential_id,
       CASE WHEN c.known THEN c.activation_date END AS credential_activation_date,
       CASE WHEN c.known THEN c.expiration_date END AS credential_expiration_date
FROM closest c
WHERE NOT (c.known AND c.current);
