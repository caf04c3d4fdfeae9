#!/usr/bin/env bash
# Runs COMMAND... (the tool builds of `make test`) while Debian's packages the tests need are installed beside it
# when missing (ci/chromium.sh, then ci/node.sh: apt-get takes one lock, so one after the other): the packages'
# downloads and unpacking overlap the compiles instead of following them. The installs' output goes to a log,
# printed after COMMAND ends; the exit status is non-zero when either failed.
# Usage: ci/packages.sh COMMAND...
set -euo pipefail
ROOT="$(cd "$(dirname "${BASH_SOURCE[0]}")/.." && pwd)"
log="$(mktemp)"
trap 'rm -f "$log"' EXIT
( bash "$ROOT/ci/chromium.sh" && bash "$ROOT/ci/node.sh" ) >"$log" 2>&1 &
pkgs=$!
status=0
"$@" || status=$?
if ! wait "$pkgs"; then
  echo "ci/packages.sh: installing Debian's packages failed:" >&2
  cat "$log" >&2
  exit 1
fi
cat "$log" >&2
exit "$status"
