#!/usr/bin/env bash
# The fault suites (test/faults): failover to a synchronous standby, PgBouncer
# in transaction mode, three service processes with one killed, a database
# restart, terminated backends and stalls. Each creates PostgreSQL 15 clusters
# of its own in a temporary directory, on free ports, run as the `postgres`
# OS user; the machine's own cluster is never touched. Installs what it needs
# from Debian's packages; a missing program fails the run, it never skips.
set -euo pipefail
cd "$(dirname "$0")/.."

PG_BIN="${PG_BIN:-/usr/lib/postgresql/15/bin}"
export PG_BIN
missing=()
command -v pgbouncer >/dev/null || missing+=(pgbouncer)
[ -x "$PG_BIN/initdb" ] && [ -x "$PG_BIN/pg_basebackup" ] || missing+=(postgresql-15)
if [ "${#missing[@]}" -gt 0 ]; then
  apt-get update
  DEBIAN_FRONTEND=noninteractive apt-get install -y --no-install-recommends "${missing[@]}"
fi
[ -d node_modules ] || npm ci --no-audit --no-fund

npx vitest run --config test/faults/vitest.config.ts
# The adapter and store contract suites again, through PgBouncer in transaction mode
# (named statements off). The files that make pools of their own test failures and bounds, not the contract.
npx tsx test/faults/support/through-pgbouncer.ts npx vitest run test/adapters test/postgres/store-contract.test.ts \
  --exclude test/adapters/store-failure.test.ts --exclude test/adapters/terminated-backend.test.ts \
  --exclude test/adapters/statement-bounds.test.ts
