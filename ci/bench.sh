#!/usr/bin/env bash
# Runs KOF's Go benchmarks (run by `make bench`) and prints two comparisons measured in the same run:
#   - chartlib rendering one chart vs `bin/helm template` of the same chart (chartlib/render);
#   - the fleet render of 1 management + 10 regional + 200 child clusters vs the equivalent `bin/helm template` runs
#     (chartlib/fleet; helm does layer 1 only, so the comparison favours helm);
#   - kof diff of that fleet (two renders and the comparison) vs one fleet render (chartlib/diff; target <= 2x).
# Then the other benchmarks: layer-2 instantiation, rule merging, promxy config, chart renders, the operator (its own
# process, run as kof-mothership ships it) at 20 regional + 200, + 1,000 (KOF_SCALE_CHILDREN) and + 10,000 and at
# 100 regional + 10,000 child clusters against the floor of a client applying the same desired objects on the same
# control plane, one table row per size (time, writes per desired object, no-op touch writes, kube-apiserver CPU,
# operator CPU and peak RSS against the targets of docs/ha.md; medians of 3 rounds); the cold-storage exporter at 1M and 5M samples against the raw VictoriaMetrics
# export read (samples/s, MB/s, ratio, peak RSS); the audit-logs exporter against the raw LogsQL read (events/s, ratio,
# peak RSS); the diagnosis of kof doctor at 100 and 1,000 clusters (and whether it grows linearly); the tenant proxy's
# overhead per metrics query against the direct query (p50/p99 latency, CPU ratio). BENCH_FILTER (a
# grep -E pattern over package paths) runs a subset.
set -euo pipefail
ROOT="$(cd "$(dirname "${BASH_SOURCE[0]}")/.." && pwd)"
cd "$ROOT"
OUT="$(mktemp -d)"
trap 'rm -rf "$OUT"' EXIT
filter="${BENCH_FILTER:-.}"

# bench PKG PATTERN BENCHTIME: runs one package's benchmarks and keeps the output. A package that fails (a broken
# benchmark, or a target it checks missed) is reported and the run goes on; the script exits 1 at the end.
failed=()
bench() {
  local pkg="$1" pattern="$2" benchtime="$3" log
  grep -qE "$filter" <<<"$pkg" || return 0
  log="$OUT/$(tr '/.' '__' <<<"$pkg").txt"
  echo "== $pkg ($pattern)"
  # No 10-minute default timeout: the operator's benchmark at 10,000 clusters runs about an hour on two cores.
  if ! go test -timeout "${BENCH_TIMEOUT:-4h}" -run '^$' -bench "$pattern" -benchtime "$benchtime" -benchmem "$pkg" > "$log" 2>&1; then
    failed+=("$pkg")
    grep -E -- '--- FAIL|_test.go:[0-9]+:' "$log" | head -20 || true
  fi
  grep -E '^(Benchmark|ok|FAIL|[0-9]+[kM]: |peak RSS)' "$log" || true
}

# nsop FILE NAME: ns/op of benchmark NAME in FILE.
nsop() { awk -v n="$2" '$1 ~ "^"n"(-[0-9]+)?$" {for (i = 2; i < NF; i++) if ($(i+1) == "ns/op") print $i}' "$1" | tail -1; }

# metric FILE BENCH UNIT: the value of the metric UNIT of benchmark BENCH in FILE.
metric() { awk -v n="$2" -v u="$3" '$1 ~ "^"n"(-[0-9]+)?$" {for (i = 2; i < NF; i++) if ($(i+1) == u) print $i}' "$1" | tail -1; }

# ratio LABEL FILE OURS THEIRS: prints both times and how many times faster ours is.
ratio() {
  local a b; a="$(nsop "$2" "$3")"; b="$(nsop "$2" "$4")"
  [ -n "$a" ] && [ -n "$b" ] || { echo "$1: missing result ($3=$a, $4=$b)"; return 1; }
  awk -v l="$1" -v a="$a" -v b="$b" -v x="$3" -v y="$4" \
    'BEGIN {printf "%s: %s %.1f ms, %s %.1f ms, ratio helm/chartlib = %.2f\n", l, x, a/1e6, y, b/1e6, b/a}'
  local ca cb; ca="$(metric "$2" "$3" cpu-s/op)"; cb="$(metric "$2" "$4" cpu-s/op)"
  if [ -n "$ca" ] && [ -n "$cb" ]; then
    awk -v l="$1" -v a="$ca" -v b="$cb" 'BEGIN {printf "%s CPU: chartlib %.2f s, helm %.2f s, ratio helm/chartlib = %.2f\n", l, a, b, b/a}'
  fi
}

bench ./chartlib/render/ 'BenchmarkRepositoryChartFromDisk$|BenchmarkHelmTemplate$' 20x
bench ./chartlib/fleet/ 'BenchmarkFleet$|BenchmarkHelmTemplateFleet$' 1x
bench ./chartlib/diff/ 'BenchmarkDiff$|BenchmarkRenderFleet$' 1x
bench ./chartlib/sveltos/ . 1s
bench ./chartlib/validate/ . 1s
bench ./doctor/diagnose/ 'BenchmarkDiagnose' 10x
bench ./tests/charts/mgmt/ . 1s
bench ./tests/charts/remote/ . 1s
bench ./operator/rules/ . 1x
bench ./operator/promxy/ . 1x
bench ./operator/internal/scale/ . 1x
bench ./exporters/columnar/ . 3x
bench ./exporters/coldstorage/ . 3x
bench ./exporters/auditlog/ . 3x
bench ./tenancy/proxy/ . 1x

echo
echo "== comparisons (same run)"
s="$OUT/__operator_internal_scale_.txt"
if [ -f "$s" ]; then
  # One row per fleet size, medians of the rounds (memory and touch writes: the largest). Targets (docs/ha.md):
  # time/floor <= 1.2, writes per desired object <= 1.05, no write on a no-op touch, kube-apiserver CPU <= 1.2x the
  # floor's, peak RSS <= 40 MiB + 30 KiB per cluster.
  echo "operator as shipped vs the floor (same run):"
  printf '  %-24s %9s %8s %10s %13s %6s %13s %11s %12s %10s  %s\n' benchmark regionals children time/floor \
    writes/desired touch apiserver/floor operator-cpu peak-RSS-MiB RSS-target misses
  for spec in "BenchmarkFleet200 20 200" "BenchmarkFleetLarge 20 ${KOF_SCALE_CHILDREN:-1000}" \
    "BenchmarkFleet10kBy20 20 10000" "BenchmarkFleet10kBy100 100 10000"; do
    read -r b nr nc <<<"$spec"
    t="$(metric "$s" "$b" time/floor)"
    [ -n "$t" ] || continue
    w="$(metric "$s" "$b" writes/desired-object)"; tw="$(metric "$s" "$b" touch-writes)"
    a="$(metric "$s" "$b" apiserver-cpu/floor)"; c="$(metric "$s" "$b" operator-cpu-s)"
    m="$(metric "$s" "$b" operator-peak-RSS-MiB)"
    awk -v b="$b" -v nr="$nr" -v nc="$nc" -v t="$t" -v w="$w" -v tw="$tw" -v a="$a" -v c="$c" -v m="$m" 'BEGIN {
      limit = 40 + 30 * (nr + nc) / 1024; miss = ""
      if (t > 1.2) miss = miss " time"; if (w > 1.05) miss = miss " writes"; if (tw > 0) miss = miss " touch"
      if (a > 1.2) miss = miss " apiserver-cpu"; if (m > limit) miss = miss " rss"
      printf "  %-24s %9d %8d %10.3f %13.3f %6d %13.3f %10.1fs %12.1f %10.1f  %s\n", b, nr, nc, t, w, tw, a, c, m, limit, (miss == "" ? "-" : miss)
    }'
  done
fi
r="$OUT/__chartlib_render_.txt"; f="$OUT/__chartlib_fleet_.txt"
[ -f "$r" ] && ratio "one chart (kof-mothership)" "$r" BenchmarkRepositoryChartFromDisk BenchmarkHelmTemplate
[ -f "$f" ] && ratio "fleet (1 mgmt + 10 regional + 200 child)" "$f" BenchmarkFleet BenchmarkHelmTemplateFleet
k="$OUT/__chartlib_diff_.txt"
if [ -f "$k" ]; then
  a="$(nsop "$k" BenchmarkDiff)"; b="$(nsop "$k" BenchmarkRenderFleet)"
  if [ -n "$a" ] && [ -n "$b" ]; then
    awk -v a="$a" -v b="$b" 'BEGIN {printf "kof diff (1 mgmt + 10 regional + 200 child): diff %.1f ms, one fleet render %.1f ms, ratio diff/render = %.2f (target <= 2)\n", a/1e6, b/1e6, a/b}'
    awk -v a="$a" -v b="$b" 'BEGIN {exit !(a/b > 2)}' && failed+=("./chartlib/diff/ (kof diff over 2x one fleet render)")
  else
    echo "kof diff: missing result (BenchmarkDiff=$a, BenchmarkRenderFleet=$b)"; failed+=("./chartlib/diff/")
  fi
fi
d="$OUT/__doctor_diagnose_.txt"
if [ -f "$d" ]; then
  a="$(nsop "$d" BenchmarkDiagnose100)"; b="$(nsop "$d" BenchmarkDiagnose1000)"
  awk -v a="$a" -v b="$b" 'BEGIN {printf "diagnosis: 101 clusters %.1f ms, 1001 clusters %.1f ms, ratio 1001/(10 x 101) = %.2f (1.0: linear)\n", a/1e6, b/1e6, b/(10*a)}'
fi
if [ ${#failed[@]} -gt 0 ]; then
  echo "bench: FAILED in ${failed[*]} (output above)"
  exit 1
fi
exit 0
