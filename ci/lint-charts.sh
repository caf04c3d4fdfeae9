#!/usr/bin/env bash
# Runs `helm lint --strict` on every chart under charts/, once with its defaults and once per ci/*-values.yaml file.
set -euo pipefail
ROOT="$(cd "$(dirname "${BASH_SOURCE[0]}")/.." && pwd)"
HELM="$ROOT/bin/helm"
cd "$ROOT"
fail=0 runs=0
for chart in charts/*/; do
  [ -f "$chart/Chart.yaml" ] || continue
  files=("")
  for f in "$chart"ci/*-values.yaml; do [ -f "$f" ] && files+=("$f"); done
  for f in "${files[@]}"; do
    args=(lint --strict "$chart")
    [ -n "$f" ] && args+=(-f "$f")
    runs=$((runs + 1))
    if ! out="$("$HELM" "${args[@]}" 2>&1)"; then
      echo "helm lint --strict ${chart%/} ${f:+-f $f}: FAILED"; echo "$out"; fail=1
    fi
  done
done
[ "$runs" -gt 0 ] || { echo "ci/lint-charts.sh: no chart found under charts/"; exit 1; }
echo "helm lint --strict: $runs runs, $([ $fail = 0 ] && echo all passed || echo some failed)"
exit $fail
