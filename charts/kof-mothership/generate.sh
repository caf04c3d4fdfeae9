#!/usr/bin/env bash
# Copies the kof-operator's generated CRDs and RBAC into the kof-mothership chart.
#   operator/config/crd/**/*.yaml  -> crds/ (Helm installs them first and never deletes them on uninstall)
#   operator/config/rbac/role.yaml -> templates/_operator_rules.tpl (the ClusterRole rules, free of values)
# Both inputs are controller-gen output (operator/generate.sh); run that first. Called by `make generate`;
# `make verify` fails when the chart differs from the result. Without role.yaml the rules template is left as it is
# (with a warning), so the CRDs can be refreshed on their own.
set -euo pipefail

chart="$(cd "$(dirname "${BASH_SOURCE[0]}")" && pwd)"
root="$(cd "${chart}/../.." && pwd)"
crd_dir="${root}/operator/config/crd"
role="${root}/operator/config/rbac/role.yaml"

mapfile -t crds < <(find "${crd_dir}" -maxdepth 2 -name '*.yaml' ! -name kustomization.yaml 2>/dev/null | LC_ALL=C sort)
if [ "${#crds[@]}" -eq 0 ]; then
	echo "generate.sh: no CRDs in ${crd_dir#"${root}/"}; run operator/generate.sh first" >&2
	exit 1
fi
rm -rf "${chart}/crds"
mkdir -p "${chart}/crds"
for f in "${crds[@]}"; do
	cp "${f}" "${chart}/crds/$(basename "${f}")"
done

if [ ! -f "${role}" ]; then
	echo "generate.sh: warning: ${role#"${root}/"} is missing; templates/_operator_rules.tpl left unchanged" >&2
	exit 0
fi

rules="$(sed -n '/^rules:/,$p' "${role}" | tail -n +2)"
if [ -z "${rules}" ]; then
	echo "generate.sh: ${role#"${root}/"} has no rules" >&2
	exit 1
fi
if grep -q '{{' <<<"${rules}"; then
	echo "generate.sh: ${role#"${root}/"} contains template delimiters" >&2
	exit 1
fi
{
	echo '{{/*'
	echo 'kof-mothership.operatorRules: the ClusterRole rules of kof-operator. Written by generate.sh from'
	echo 'operator/config/rbac/role.yaml (controller-gen output of the operator'"'"'s RBAC markers): change the markers,'
	echo 'never this file. Input: none. Output: YAML list of PolicyRules.'
	echo '*/}}'
	echo '{{- define "kof-mothership.operatorRules" -}}'
	echo "${rules}"
	echo '{{- end -}}'
} >"${chart}/templates/_operator_rules.tpl"
