-- The dashboard's two PostgreSQL roles, least privilege; run by the schema owner after every
-- `firsttoken db upgrade` (docker compose's one-shot `roles` service does), so the tables a
-- migration adds are covered too. Safe to run again: roles are created once, passwords and grants
-- are set to what is given each time.
--
--   psql -v ON_ERROR_STOP=1 -v reader_pw=… -v writer_pw=… -f deploy/postgres-roles.sql
--
-- reader (default `dashboard`): SELECT on every table. The dashboard's pages and the MCP tools
--   read through it (FIRSTTOKEN_DASHBOARD_DATABASE_URL, FIRSTTOKEN_MCP_DATABASE_URL).
-- writer (default `dashboard_writer`): the dashboard's only writes, an incident published,
--   updated or resolved (dashboard/writes.py, as `firsttoken incident` does them): SELECT and
--   UPDATE on `incidents`, SELECT, INSERT and UPDATE on `incident_updates`, nothing else
--   (FIRSTTOKEN_DATABASE_URL of the dashboard). It reads no sample, alert or subscriber.
--
-- Names other than the defaults: -v reader=… -v writer=…

\set ON_ERROR_STOP 1
\if :{?reader}
\else
  \set reader dashboard
\endif
\if :{?writer}
\else
  \set writer dashboard_writer
\endif

SELECT current_database() AS db \gset

SELECT NOT EXISTS (SELECT 1 FROM pg_roles WHERE rolname = :'reader') AS create_reader \gset
\if :create_reader
  CREATE ROLE :"reader" LOGIN;
\endif
ALTER ROLE :"reader" LOGIN PASSWORD :'reader_pw';
GRANT CONNECT ON DATABASE :"db" TO :"reader";
GRANT USAGE ON SCHEMA public TO :"reader";
GRANT SELECT ON ALL TABLES IN SCHEMA public TO :"reader";
-- Tables created later (daily partitions of samples, a newer migration's) are readable at once.
ALTER DEFAULT PRIVILEGES IN SCHEMA public GRANT SELECT ON TABLES TO :"reader";

SELECT NOT EXISTS (SELECT 1 FROM pg_roles WHERE rolname = :'writer') AS create_writer \gset
\if :create_writer
  CREATE ROLE :"writer" LOGIN;
\endif
ALTER ROLE :"writer" LOGIN PASSWORD :'writer_pw';
GRANT CONNECT ON DATABASE :"db" TO :"writer";
GRANT USAGE ON SCHEMA public TO :"writer";
GRANT SELECT, UPDATE ON incidents TO :"writer";
GRANT SELECT, INSERT, UPDATE ON incident_updates TO :"writer";
-- An update's id comes from the table's sequence.
SELECT pg_get_serial_sequence('incident_updates', 'id') AS updates_id_seq \gset
\if :{?updates_id_seq}
  GRANT USAGE ON SEQUENCE :updates_id_seq TO :"writer";
\endif
