#!/usr/bin/env bash
# Install what the PostgreSQL tests need on a fresh Debian machine (as root):
# Debian's PostgreSQL server (initdb, pg_ctl under /usr/lib/postgresql/*/bin; the
# tests start their own servers in temporary folders, never the system's cluster)
# and the driver, psycopg (vae's `postgres` extra). Idempotent.
set -euo pipefail

if ! ls /usr/lib/postgresql/*/bin/initdb >/dev/null 2>&1; then
  export DEBIAN_FRONTEND=noninteractive
  apt-get update -qq
  # postgresql-common would create and start a cluster of its own: not wanted here
  # (a drop-in file, not its conffile, so dpkg has nothing to ask).
  mkdir -p /etc/postgresql-common/createcluster.d
  echo "create_main_cluster = false" > /etc/postgresql-common/createcluster.d/vae-tests.conf
  apt-get install -y -qq --no-install-recommends postgresql
fi
# As root the tests run the server as the `postgres` user (the package creates it).
id postgres >/dev/null
command -v setpriv >/dev/null

python -m pip install --quiet "psycopg[binary]>=3.1"

ls -d /usr/lib/postgresql/*/bin/initdb
python -c "import psycopg; print('psycopg', psycopg.__version__)"
