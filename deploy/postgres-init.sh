#!/bin/sh
# Creates the dashboard's read-only role on first start of the PostgreSQL container.
# Default privileges make tables created later by `firsttoken db upgrade` readable too.
set -eu
psql -v ON_ERROR_STOP=1 --username "$POSTGRES_USER" --dbname "$POSTGRES_DB" <<SQL
CREATE ROLE dashboard LOGIN PASSWORD '${DASHBOARD_PASSWORD}';
GRANT CONNECT ON DATABASE ${POSTGRES_DB} TO dashboard;
GRANT USAGE ON SCHEMA public TO dashboard;
GRANT SELECT ON ALL TABLES IN SCHEMA public TO dashboard;
ALTER DEFAULT PRIVILEGES FOR ROLE ${POSTGRES_USER} IN SCHEMA public GRANT SELECT ON TABLES TO dashboard;
SQL
