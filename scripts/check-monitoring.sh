#!/usr/bin/env bash
# Checks the shipped Prometheus alert rules with promtool: syntax, then the
# rules' own unit tests. promtool comes from Debian's `prometheus` package;
# when it is not installed, the package is downloaded and only promtool is
# unpacked from it, so no Prometheus server is installed or started.
set -euo pipefail
cd "$(dirname "$0")/.."

promtool=$(command -v promtool || true)
if [ -z "$promtool" ]; then
  work=$(mktemp -d)
  trap 'rm -rf "$work"' EXIT
  apt-get update -qq
  (cd "$work" && apt-get download prometheus >/dev/null)
  dpkg-deb -x "$work"/prometheus_*.deb "$work/root"
  promtool="$work/root/usr/bin/promtool"
fi

"$promtool" check rules monitoring/retrysafe-alerts.yml
"$promtool" test rules monitoring/retrysafe-alerts.test.yml
