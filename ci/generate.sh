#!/usr/bin/env bash
# Regenerates every generated file of the repository, in dependency order (run by `make generate`):
#   1. operator deepcopy, CRDs and RBAC          (operator/generate.sh, controller-gen)
#   2. kof-mothership's copy of the CRDs and RBAC (charts/kof-mothership/generate.sh)
#   3. the chart partials several charts share, copied from charts/partials (charts/partials/generate.sh)
#   4. KOF's Grafana dashboards as JSON in charts/kof-dashboards and charts/kof-storage (kof dashboards generate,
#      chartlib/dashboards)
#   5. values JSON schemas, in schemas/ and each chart's values.schema.json (kof schema generate)
#   6. chart READMEs from README.md.gotmpl and the `# --` comments (helm-docs)
#   7. install bundles dist/install-crds.yaml and dist/install.yaml (kof bundle, kustomize API)
#   8. the collector distribution's builder manifest ci/otelcol/manifest.yaml (kof collector manifest)
set -euo pipefail
ROOT="$(cd "$(dirname "${BASH_SOURCE[0]}")/.." && pwd)"
cd "$ROOT"
step() { echo "[generate] $*" >&2; }

step "operator: deepcopy, CRDs, RBAC"
bash operator/generate.sh
step "kof-mothership: CRDs and operator RBAC"
bash charts/kof-mothership/generate.sh
step "shared chart partials"
bash charts/partials/generate.sh
step "dashboards"
go run ./tools/kof dashboards generate
step "values schemas"
go run ./tools/kof schema generate
step "chart READMEs"
"$ROOT/bin/helm-docs" --chart-search-root charts --template-files README.md.gotmpl --log-level warning
step "install bundles"
go run ./tools/kof bundle --config operator/config --out dist
step "collector distribution manifest"
go run ./tools/kof collector manifest --out ci/otelcol/manifest.yaml
