#!/usr/bin/env bash
# The test run of `make test`, after the tools, CRDs and Chromium are in place:
#   1. every package's tests (go test ./...), the packages that wait longest on real servers started first so that
#      they do not form the run's tail, each package within GOTEST_TIMEOUT unless it is listed with a timeout of its
#      own below, GOTEST_P packages at a time (default 4: most of those tests wait on
#      controllers and servers, so on two cores four packages keep the CPU busy where two leave it half idle);
#   2. as soon as every package but tests/e2e has finished (tests/e2e, the longest, then runs alone and leaves a core
#      mostly idle), side by side with its end: every benchmark once at its smallest size (-short -benchtime 1x, in a
#      run of its own so the tests' run stays cacheable and no TestMain runs twice) and `helm lint --strict` of every
#      chart.
# Exit status: non-zero when any of them failed; the output of each part is printed whole.
set -euo pipefail
ROOT="$(cd "$(dirname "${BASH_SOURCE[0]}")/.." && pwd)"
cd "$ROOT"
GO="${GO:-go}"
TIMEOUT="${GOTEST_TIMEOUT:-18m}"
P="${GOTEST_P:-4}"
# Test binaries are linked without DWARF (-w): nothing runs a debugger on them, and panics and stack traces use the
# symbol table, which stays. Every run links each test binary anew (a clean clone's packages are new to the build
# cache); without DWARF the link of tests/e2e takes 7.7 CPU-s instead of 13.5.
LINK=(-ldflags=-w)

# The slowest packages of a warm run on two cores, slowest first (seconds measured there: fidelity 839, e2e 731,
# node 247, exporters 175, ui 152, scenarios 121, harness 103, scale 80, datapath 30). A package missing from the tree is an
# error, so this list cannot go stale silently.
first=(./tests/fidelity ./tests/e2e ./tests/node ./tests/exporters ./tests/ui ./tests/scenarios ./internal/harness
  ./operator/internal/scale ./tests/datapath)
for p in "${first[@]}"; do
  [ -d "$p" ] || { echo "ci/test.sh: $p is in the list of slow packages but not in the tree; update the list" >&2; exit 1; }
done

# Packages whose cold cost does not fit TIMEOUT, each with the timeout that does, run by a `go test` of their own
# beside the others (which then run P-1 at a time). tests/e2e publishes release N-1 from an earlier commit: on a fresh
# machine that compiles the earlier tree's images from nothing (the package took over 18 minutes there, about 16
# warm). The list is checked like the one above.
own=(./tests/e2e=${GOTEST_E2E_TIMEOUT:-40m})
own_pkgs=()
for e in "${own[@]}"; do
  [ -d "${e%%=*}" ] || { echo "ci/test.sh: ${e%%=*} has its own timeout but is not in the tree; update the list" >&2; exit 1; }
  own_pkgs+=("${e%%=*}")
done
rest=()
for p in "${first[@]}"; do [[ " ${own_pkgs[*]} " == *" $p "* ]] || rest+=("$p"); done

start=$(date +%s)
status=0
pids=()
# tests/e2e is the one package that publishes releases for every release platform: `make test` compiled the in-cluster
# programs for this machine's platform only (what tests/node builds images of), and the other platforms compile
# here, beside the other packages' tests (which mostly wait on servers), before tests/e2e starts.
for e in "${own[@]}"; do
  if [ "${e%%=*}" = ./tests/e2e ]; then
    ( GOGC="${KOF_BUILD_GOGC:-400}" "$ROOT/bin/kof" images --compile-only && "$GO" test "${LINK[@]}" -timeout "${e#*=}" "${e%%=*}" ) &
  else
    "$GO" test "${LINK[@]}" -timeout "${e#*=}" "${e%%=*}" &
  fi
  pids+=($!)
done
# ./... lists the packages with their own timeout too; -skip cannot drop a package, so they are listed by name and
# left out here.
mapfile -t all < <("$GO" list ./... | sed "s|^$("$GO" list -m)/|./|")
for p in "${all[@]}"; do [[ " ${own_pkgs[*]} " == *" $p "* || " ${rest[*]} " == *" $p "* ]] || rest+=("$p"); done
"$GO" test "${LINK[@]}" -p "$(( P > 1 ? P - 1 : 1 ))" -timeout "$TIMEOUT" "${rest[@]}" || status=1
echo "[test] go test of every package but ${own_pkgs[*]}: $(( $(date +%s) - start )) s"

mapfile -t bench < <(git grep -l '^func Benchmark' -- '*_test.go' | xargs -n1 dirname | sort -u | sed 's|^|./|')
logs="$(mktemp -d)"
trap 'rm -rf "$logs"' EXIT
mid=$(date +%s)
( "$GO" test "${LINK[@]}" -short -run '^$' -bench . -benchtime 1x -timeout "$TIMEOUT" "${bench[@]}" >"$logs/bench" 2>&1 ) &
bench_pid=$!
( bash ci/lint-charts.sh >"$logs/lint" 2>&1 ) &
lint_pid=$!
for pid in "${pids[@]}"; do wait "$pid" || status=1; done
echo "[test] go test: $(( $(date +%s) - start )) s"
wait "$bench_pid" || { status=1; echo "[test] benchmarks (once each, -short): FAILED" >>"$logs/bench"; }
wait "$lint_pid" || status=1
cat "$logs/bench" "$logs/lint"
echo "[test] benchmarks once and chart lint: $(( $(date +%s) - mid )) s; all: $(( $(date +%s) - start )) s"
exit "$status"
