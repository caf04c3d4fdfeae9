#!/usr/bin/env bash
# Copies the chart partials that several KOF charts share from charts/partials into each chart that uses them
# (run by `make generate`; `make verify` fails when a copy differs from its source). The table below is the only
# list of who gets what:
#   templates/_kof_names.tpl  -> the name rules of operator/names (layer 1 and layer 2), in every chart that names
#                                 per-cluster objects
#   templates/_kof_mode.tpl   -> Istio mode detection
#   templates/_kof_layer2.tpl -> the layer-2 hand-off and the MultiClusterService service helpers
#   files/*                   -> the layer-2 head and the layer-2 templates both MultiClusterService charts use as they are
# Each copied template starts with a comment naming its source; files/ copies are byte-for-byte (their text is
# embedded in the rendered MultiClusterService values).
set -euo pipefail

src="$(cd "$(dirname "${BASH_SOURCE[0]}")" && pwd)"
charts="$(cd "${src}/.." && pwd)"

copies=(
	"templates/_kof_names.tpl:kof-regional kof-child kof-storage"
	"templates/_kof_mode.tpl:kof-regional kof-child kof kof-mothership"
	"templates/_kof_layer2.tpl:kof-regional kof-child"
	"files/_head.tpl:kof-regional kof-child"
	"files/kof-operators.tpl:kof-regional kof-child"
	"files/opentelemetry-operator.tpl:kof-regional kof-child"
	"files/prometheus-operator-crds.tpl:kof-regional kof-child"
	"files/vmuser-credentials.yaml:kof-regional kof-child"
	"files/kube-state-metrics.tpl:kof-regional kof-child"
	"files/prometheus-node-exporter.tpl:kof-regional kof-child"
	"files/opencost.tpl:kof-regional kof-child"
)

for entry in "${copies[@]}"; do
	file="${entry%%:*}"
	for chart in ${entry#*:}; do
		dest="${charts}/${chart}/${file}"
		mkdir -p "$(dirname "${dest}")"
		case "${file}" in
		templates/*)
			{
				printf '{{/* Copied from charts/partials/%s by `make generate`; edit the source, not this copy. */}}\n' "${file}"
				cat "${src}/${file}"
			} >"${dest}"
			;;
		*) cp "${src}/${file}" "${dest}" ;;
		esac
	done
done
