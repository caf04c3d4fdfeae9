#!/usr/bin/env bash
# Generates the third-party CRDs KOF renders or reads (KCM, VictoriaMetrics operator, Flux, Sveltos, cert-manager,
# Gateway API, OpenTelemetry operator, prometheus-operator, grafana-operator) from their upstream Go API types with
# controller-gen, into bin/crds/ (ignored by git). The module versions are the ones pinned in go.mod, so the CRDs
# always match the types chartlib validates against. Skipped when bin/crds/ was made from the same go.sum; copied from
# the machine's cache when another clone made them from it.
# Usage: ci/crds.sh   (needs bin/controller-gen: ci/tools.sh controller-gen)
set -euo pipefail
ROOT="$(cd "$(dirname "${BASH_SOURCE[0]}")/.." && pwd)"
OUT="${CRDS_DIR:-$ROOT/bin/crds}"
CG="$ROOT/bin/controller-gen"
cd "$ROOT"

packages=(
  github.com/K0rdent/kcm/api/v1beta1
  github.com/VictoriaMetrics/operator/api/operator/v1beta1
  github.com/VictoriaMetrics/operator/api/operator/v1
  github.com/fluxcd/helm-controller/api/v2
  github.com/fluxcd/source-controller/api/v1
  github.com/projectsveltos/libsveltos/api/v1beta1
  github.com/projectsveltos/addon-controller/api/v1beta1
  github.com/cert-manager/cert-manager/pkg/apis/certmanager/v1
  sigs.k8s.io/gateway-api/apis/v1
  "github.com/open-telemetry/opentelemetry-operator/apis/v1beta1 github.com/open-telemetry/opentelemetry-operator/apis/v1alpha1"
  github.com/prometheus-operator/prometheus-operator/pkg/apis/monitoring/v1
  github.com/grafana/grafana-operator/v5/api/v1beta1
  sigs.k8s.io/cluster-api/api/core/v1beta2
)

stamp="$(cat go.sum "${BASH_SOURCE[0]}" | sha256sum | cut -c1-16)"
# The machine keeps the CRDs of each stamp (crds/<stamp> of KOF_TEST_CACHE, default ~/.cache/kof-tests), so a clean
# clone copies them instead of running controller-gen again (about 5 s and 7 CPU-s).
cache="${KOF_TEST_CACHE:-${XDG_CACHE_HOME:-$HOME/.cache}/kof-tests}/crds/$stamp"
# keep: copies OUT beside the cache folder, then renames it into place (a run doing the same at the same time leaves
# the first one's copy).
keep() {
  [ -f "$cache/.stamp" ] && return 0
  mkdir -p "$(dirname "$cache")"
  rm -rf "$cache.tmp.$$" && cp -a "$OUT" "$cache.tmp.$$" && { mv -T "$cache.tmp.$$" "$cache" 2>/dev/null || rm -rf "$cache.tmp.$$"; }
}
if [ -f "$OUT/.stamp" ] && [ "$(cat "$OUT/.stamp")" = "$stamp" ]; then
  keep
  exit 0
fi
if [ -f "$cache/.stamp" ] && [ "$(cat "$cache/.stamp")" = "$stamp" ]; then
  rm -rf "$OUT.tmp" && cp -a "$cache" "$OUT.tmp" && rm -rf "$OUT" && mv "$OUT.tmp" "$OUT"
  echo "[crds] $(find "$OUT" -name '*.yaml' | wc -l) CRDs in ${OUT#$ROOT/} (kept by the machine for this go.sum)" >&2
  exit 0
fi
[ -x "$CG" ] || { echo "ci/crds.sh: $CG is missing; run: make tools" >&2; exit 1; }
rm -rf "$OUT.tmp" && mkdir -p "$OUT.tmp"
# An entry of several packages (one API group in several versions, such as OpenTelemetryCollector in v1alpha1 and
# v1beta1) is generated in one run, so each CRD holds all its versions; separate runs would write two CRDs of one
# name and the API server would keep whichever it got last.
for p in "${packages[@]}"; do
  read -ra pkgs <<<"$p"
  d="$OUT.tmp/$(echo "${pkgs[0]}" | tr '/.' '__')"
  mkdir -p "$d"
  paths=()
  for q in "${pkgs[@]}"; do paths+=("paths=$q"); done
  # maxDescLen=0 keeps the VMCluster CRD under etcd's request size limit; generateEmbeddedObjectMeta keeps the
  # labels/annotations of embedded templates from being pruned.
  "$CG" crd:maxDescLen=0,generateEmbeddedObjectMeta=true "${paths[@]}" output:crd:dir="$d" >/dev/null
done
dup="$(for f in "$OUT.tmp"/*/*.yaml; do sed -n 's/^  name: //p' "$f" | head -1; done | sort | uniq -d)"
[ -z "$dup" ] || { echo "ci/crds.sh: CRDs generated twice (put their packages in one entry): $dup" >&2; exit 1; }
# The API server refuses CRDs of the protected *.k8s.io groups without this annotation.
for f in "$OUT.tmp"/sigs_k8s_io_gateway-api*/*.yaml; do
  [ -f "$f" ] || continue
  sed -i '0,/^  annotations:/s//  annotations:\n    api-approved.kubernetes.io: https:\/\/github.com\/kubernetes-sigs\/gateway-api/' "$f"
  grep -q 'api-approved.kubernetes.io' "$f" || sed -i '0,/^metadata:/s//metadata:\n  annotations:\n    api-approved.kubernetes.io: https:\/\/github.com\/kubernetes-sigs\/gateway-api/' "$f"
done
echo "$stamp" > "$OUT.tmp/.stamp"
rm -rf "$OUT" && mv "$OUT.tmp" "$OUT"
keep
echo "[crds] $(find "$OUT" -name '*.yaml' | wc -l) CRDs in ${OUT#$ROOT/}" >&2
