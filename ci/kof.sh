#!/usr/bin/env bash
# Builds the kof CLI (./tools/kof) into bin/kof for `make build`, `make test`, `make demo` and ci/release.sh: one
# `go build -trimpath -ldflags=-w` into the machine's program cache (programs/tools_kof of KOF_TEST_CACHE, default
# ~/.cache/kof-tests: the file proc.BuildProgram keeps for the tests that run kof), under the flock(2) lock
# proc.BuildProgram takes, then a copy to bin/kof. Go relinks the cached file only when its build ID changed, so a
# clean clone of a tree built before on the machine links nothing (a link of tools/kof takes about 14 s of CPU),
# and every caller builds it with the same flags, so none relinks what another built. bin/kof is a copy, not a link:
# a `go build -o bin/kof` by hand may write into the file it finds there.
set -euo pipefail
ROOT="$(cd "$(dirname "${BASH_SOURCE[0]}")/.." && pwd)"
cd "$ROOT"
cache="${KOF_TEST_CACHE:-${XDG_CACHE_HOME:-$HOME/.cache}/kof-tests}/programs"
mkdir -p "$cache" bin
exec {lock}>"$cache/tools_kof.lock"
flock "$lock"
"${GO:-go}" build -trimpath -ldflags=-w -o "$cache/tools_kof" ./tools/kof
if ! cmp -s "$cache/tools_kof" bin/kof; then
  cp -f "$cache/tools_kof" bin/kof.tmp.$$
  mv -f bin/kof.tmp.$$ bin/kof
fi
