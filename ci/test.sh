#!/usr/bin/env bash
# The test run of `make test`, after the tools, CRDs and Chromium are in place, three `go test` runs side by side:
#   1. tests/e2e with a timeout of its own (it publishes releases: see `own` below);
#   2. the packages that have benchmarks: their tests and then every benchmark once at its smallest size (`-short
#      -bench . -benchtime 1x`) in the same test binary, so each of them is linked once and its TestMain (some start
#      a control plane or servers) runs once. `-short` selects the benchmarks' small sizes; tests/layout allows
#      testing.Short() only in bench_test.go files, so it never skips a test's work. Go never caches a run with
#      -bench, so a checkout whose tests passed before runs these packages' tests again; a new clone runs them
#      anyway (they read files of the tree, whose times are new).
#   3. every other package, the packages that wait longest on real servers started first so that they do not form
#      the run's tail, each package within GOTEST_TIMEOUT, GOTEST_P - 1 packages at a time (GOTEST_P default 4: most
#      of those tests wait on controllers and servers, so on two cores four packages keep the CPU busy where two
#      leave it half idle);
# and `helm lint --strict` of every chart beside them.
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

# The packages that have benchmarks (run by part 2 above, tests and benchmarks in one binary).
mapfile -t bench < <(git grep -l '^func Benchmark' -- '*_test.go' | xargs -n1 dirname | sort -u | sed 's|^|./|')

# The slowest packages of a warm run on two cores, slowest first (seconds measured there: fidelity 543, e2e 651,
# node 242, ui 211, scenarios 157, exporters 115, harness 99, datapath 32). A package missing from the tree is an
# error, so this list cannot go stale silently.
first=(./tests/fidelity ./tests/e2e ./tests/node ./tests/ui ./tests/scenarios ./tests/exporters ./internal/harness
  ./tests/datapath)
for p in "${first[@]}"; do
  [ -d "$p" ] || { echo "ci/test.sh: $p is in the list of slow packages but not in the tree; update the list" >&2; exit 1; }
  [[ " ${bench[*]} " != *" $p "* ]] || { echo "ci/test.sh: $p has benchmarks: it runs with them, not in the list of slow packages" >&2; exit 1; }
done

# Packages whose cold cost does not fit TIMEOUT, each with the timeout that does, run by a `go test` of their own
# beside the others. tests/e2e publishes release N-1 from an earlier commit: on a fresh machine that compiles the
# earlier tree's images from nothing (the package took over 18 minutes there, about 16 warm). The list is checked
# like the one above.
own=(./tests/e2e=${GOTEST_E2E_TIMEOUT:-40m})
own_pkgs=()
for e in "${own[@]}"; do
  [ -d "${e%%=*}" ] || { echo "ci/test.sh: ${e%%=*} has its own timeout but is not in the tree; update the list" >&2; exit 1; }
  own_pkgs+=("${e%%=*}")
done
rest=()
for p in "${first[@]}"; do [[ " ${own_pkgs[*]} " == *" $p "* ]] || rest+=("$p"); done

logs="$(mktemp -d)"
trap 'rm -rf "$logs"' EXIT
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
bench_pkgs=()
for p in "${bench[@]}"; do [[ " ${own_pkgs[*]} " == *" $p "* ]] || bench_pkgs+=("$p"); done
( "$GO" test "${LINK[@]}" -short -bench . -benchtime 1x -timeout "$TIMEOUT" "${bench_pkgs[@]}" >"$logs/bench" 2>&1 ) &
bench_pid=$!
( bash ci/lint-charts.sh >"$logs/lint" 2>&1 ) &
lint_pid=$!
# ./... lists the packages of the other runs too; -skip cannot drop a package, so they are listed by name and left
# out here.
mapfile -t all < <("$GO" list ./... | sed "s|^$("$GO" list -m)/|./|")
for p in "${all[@]}"; do
  [[ " ${own_pkgs[*]} " == *" $p "* || " ${rest[*]} " == *" $p "* || " ${bench_pkgs[*]} " == *" $p "* ]] || rest+=("$p")
done
"$GO" test "${LINK[@]}" -p "$(( P > 1 ? P - 1 : 1 ))" -timeout "$TIMEOUT" "${rest[@]}" || status=1
echo "[test] go test of every package but ${own_pkgs[*]} and those with benchmarks: $(( $(date +%s) - start )) s"
wait "$bench_pid" || { status=1; echo "[test] packages with benchmarks (tests, then each benchmark once, -short): FAILED" >>"$logs/bench"; }
cat "$logs/bench"
echo "[test] packages with benchmarks (tests, then each benchmark once, -short): done at $(( $(date +%s) - start )) s"
for pid in "${pids[@]}"; do wait "$pid" || status=1; done
wait "$lint_pid" || status=1
cat "$logs/lint"
echo "[test] go test: $(( $(date +%s) - start )) s; all: $(( $(date +%s) - start )) s"
exit "$status"
