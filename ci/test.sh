#!/usr/bin/env bash
# The test run of `make test`, after the tools, CRDs and Chromium are in place:
#   1. every test binary is built (`go test -c -trimpath`) into a folder per machine (KOF_TEST_CACHE, default
#      ~/.cache/kof-tests) and linked only when its build ID changed: a clean clone of a tree whose test binaries
#      were built before on the machine links none (linking them took about 300 CPU-s of a warm run, more than any
#      package but two); -trimpath keeps the checkout's path out of every build ID, so any clone shares them;
#   2. every package's tests, the packages that wait longest on real servers started first so that they do not form
#      the run's tail, each package within GOTEST_TIMEOUT unless it is listed with a timeout of its own below,
#      GOTEST_P packages at a time (default 4: most of those tests wait on controllers and servers, so on two cores
#      four packages keep the CPU busy where two leave it half idle), each binary run in its package's folder as
#      `go test` runs it, with the same summary line per package (its whole output when it failed);
#   3. queued behind the test packages in the same pool: every benchmark once at its smallest size (-short
#      -benchtime 1x, the same binaries; the gates are `make bench`'s) and `helm lint --strict` of every chart, so
#      they fill the cores while the last packages and tests/e2e finish (run after them, they were a tail of about
#      40 s with a core half idle).
# Exit status: non-zero when any of them failed; the output of each part is printed whole.
set -euo pipefail
ROOT="$(cd "$(dirname "${BASH_SOURCE[0]}")/.." && pwd)"
cd "$ROOT"
GO="${GO:-go}"
TIMEOUT="${GOTEST_TIMEOUT:-18m}"
P="${GOTEST_P:-4}"
CACHE="${KOF_TEST_CACHE:-${XDG_CACHE_HOME:-$HOME/.cache}/kof-tests}"
MODULE="$("$GO" list -m)"
# Test binaries are linked without DWARF (-w): nothing runs a debugger on them, and panics and stack traces use the
# symbol table, which stays; without DWARF the link of tests/e2e takes 7.7 CPU-s instead of 13.5.
BUILD=(-trimpath -ldflags=-w)

# The slowest packages of a warm run on two cores, slowest first (CPU seconds of each test binary with the programs
# it starts, measured there: fidelity 487, e2e 386, ui 134, node 123, scenarios 74, exporters 43, scale 32, harness
# 11, datapath 5). A package missing from the tree is an error, so this list cannot go stale silently.
first=(./tests/fidelity ./tests/e2e ./tests/ui ./tests/node ./tests/scenarios ./tests/exporters ./internal/harness
  ./operator/internal/scale ./tests/datapath)
for p in "${first[@]}"; do
  [ -d "$p" ] || { echo "ci/test.sh: $p is in the list of slow packages but not in the tree; update the list" >&2; exit 1; }
done

# Packages whose cold cost does not fit TIMEOUT, each with the timeout that does, run beside the others (which then
# run P-1 at a time). tests/e2e publishes release N-1 from an earlier commit: on a fresh machine that compiles the
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
mapfile -t all < <("$GO" list -f '{{if or .TestGoFiles .XTestGoFiles}}{{.ImportPath}}{{end}}' ./... | sed "s|^$MODULE|.|")
for p in "${all[@]}"; do [[ " ${own_pkgs[*]} " == *" $p "* || " ${rest[*]} " == *" $p "* ]] || rest+=("$p"); done

start=$(date +%s)
mkdir -p "$CACHE"
# A run's folder is removed on its way out; one a killed run left (hard links only) goes after a day.
find "$CACHE" -maxdepth 1 -name 'run.*' -type d -mmin +1440 -exec rm -rf {} + 2>/dev/null || true
run="$(mktemp -d "$CACHE/run.XXXXXX")"
trap 'rm -rf "$run"' EXIT

# 1. Build. `go test -c -o DIR/` names each binary after the last element of its import path, so packages whose last
# elements are alike go to folders of their own (g0, g1, ...). The builds hold an flock(2) lock on the cache, so two
# runs on one machine never build into the same file; each run then hard-links the binaries it runs into a folder
# of its own, which a later build (that replaces a binary by a new file) cannot change under it.
declare -A bin_of=() seen=() groups=()
for p in "${all[@]}"; do
  base="${p##*/}"
  g="${seen[$base]:-0}"
  seen[$base]=$(( g + 1 ))
  groups[$g]+=" $p"
  bin_of[$p]="$run/bin/g$g/$base.test"
done
exec {lock}>"$CACHE/build.lock"
flock "$lock"
for g in "${!groups[@]}"; do
  # shellcheck disable=SC2086 # the group's packages, one word each
  "$GO" test "${BUILD[@]}" -c -o "$CACHE/bin/g$g/" ${groups[$g]} || { echo "[test] building the test binaries: FAILED" >&2; exit 1; }
done
mkdir -p "$run/bin" "$run/out"
cp -al "$CACHE/bin/." "$run/bin/"
flock -u "$lock"
echo "[test] test binaries of ${#all[@]} packages: $(( $(date +%s) - start )) s"

# run_pkg OUT PKG TIMEOUT [ARGS...]: runs the test binary of PKG in PKG's folder with -test.timeout TIMEOUT and ARGS
# and writes into OUT what `go test` prints for a package: its output when it failed (or ran benchmarks), then the
# summary line. Exit status: the binary's.
run_pkg() {
  local out="$1" pkg="$2" timeout="$3" t0 rc=0 secs
  shift 3
  t0=$EPOCHREALTIME
  (cd "$pkg" && exec "${bin_of[$pkg]}" -test.paniconexit0 -test.timeout="$timeout" "$@") >"$out.log" 2>&1 || rc=$?
  secs="$(awk -v a="$t0" -v b="$EPOCHREALTIME" 'BEGIN { printf "%.3f", b - a }')"
  if [ "$rc" -ne 0 ]; then
    { cat "$out.log"; printf 'FAIL\t%s\t%ss\n' "$MODULE/${pkg#./}" "$secs"; } >"$out"
  elif [[ " $* " == *" -test.bench "* ]]; then
    { cat "$out.log"; printf 'ok  \t%s\t%ss\n' "$MODULE/${pkg#./}" "$secs"; } >"$out"
  else
    printf 'ok  \t%s\t%ss\n' "$MODULE/${pkg#./}" "$secs" >"$out"
  fi
  return "$rc"
}

# 2. Tests. tests/e2e is the one package that publishes releases for every release platform: `make test` compiled
# the in-cluster programs for this machine's platform only (what tests/node builds images of), and the other
# platforms compile here, beside the other packages' tests (which mostly wait on servers), before tests/e2e starts.
# The garbage collector's target of the test processes and of what they start with this environment (envtest's
# kube-apiserver and etcd, the test servers, kubelet and containerd): with Go's default, kube-apiserver, most of a
# run's CPU, spends much of it collecting. docs/design.md has the figures (GOGC=200: 553 s and 1,209 busy CPU-s
# instead of 648 s and 1,332, about 15 GiB of memory in use at the peak; 300 needed about 19 GiB).
export GOGC="${KOF_TEST_GOGC:-200}"
status=0
pids=()
for e in "${own[@]}"; do
  p="${e%%=*}" out="$run/out/${p//\//_}"
  if [ "$p" = ./tests/e2e ]; then
    ( GOGC="${KOF_BUILD_GOGC:-400}" "$ROOT/bin/kof" images --compile-only >"$out.images" 2>&1 ||
        { cat "$out.images"; printf 'FAIL\t%s\t(kof images --compile-only)\n' "$MODULE/${p#./}"; exit 1; }
      run_pkg "$out" "$p" "${e#*=}" ) &
  else
    run_pkg "$out" "$p" "${e#*=}" &
  fi
  pids+=($!)
done
declare -A running=()
max=$(( P > 1 ? P - 1 : 1 ))
reap() {
  local done_pid rc=0
  wait -n -p done_pid "${!running[@]}" || rc=$?
  cat "$run/out/${running[$done_pid]}"
  [ "$rc" -eq 0 ] || status=1
  unset "running[$done_pid]"
}
# job NAME CMD...: runs CMD in the background as job NAME (its output file under $run/out), at most $max at once.
job() {
  local name="$1"
  shift
  while [ "${#running[@]}" -ge "$max" ]; do reap; done
  "$@" &
  running[$!]="$name"
}
for p in "${rest[@]}"; do
  job "${p//\//_}" run_pkg "$run/out/${p//\//_}" "$p" "$TIMEOUT"
done
# 3. Every benchmark once at its smallest size (-short -benchtime 1x, the same binaries) and `helm lint --strict` of
# every chart, queued behind the test packages in the same pool, so they fill the cores while the last packages
# and tests/e2e finish instead of forming a tail of their own after them.
mapfile -t bench < <(git grep -l '^func Benchmark' -- '*_test.go' | xargs -n1 dirname | sort -u | sed 's|^|./|')
lint() { if bash ci/lint-charts.sh >"$run/out/lint" 2>&1; then return 0; else echo "[test] chart lint: FAILED" >>"$run/out/lint"; return 1; fi; }
for p in "${bench[@]}"; do
  job "bench${p//\//_}" run_pkg "$run/out/bench${p//\//_}" "$p" "$TIMEOUT" -test.short -test.run '^$' -test.bench . -test.benchtime 1x
done
job lint lint
while [ "${#running[@]}" -gt 0 ]; do reap; done
echo "[test] every package but ${own_pkgs[*]}, the benchmarks once and the chart lint: $(( $(date +%s) - start )) s"
for i in "${!pids[@]}"; do
  wait "${pids[$i]}" || status=1
  cat "$run/out/${own_pkgs[$i]//\//_}" 2>/dev/null || true
done
echo "[test] all: $(( $(date +%s) - start )) s"
exit "$status"
