#!/usr/bin/env bash
# Copies the kof-operator's generated CRDs and RBAC into the kof-mothership chart.
#   operator/config/crd/bases/*.yaml -> crds/ (Helm installs them first and never deletes them on uninstall)
#   operator/config/rbac/role.yaml   -> templates/_operator_rules.tpl (the ClusterRole rules, free of values)
# Both inputs are controller-gen output (operator/generate.sh); run that first. Called by `make generate`;
# `make verify` fails when the chart differs from the result.
set -euo pipefail

chart="$(cd "$(dirname "${BASH_SOURCE[0]}")" && pwd)"
root="$(cd "${chart}/../.." && pwd)"
crd_dir="${root}/operator/config/crd/bases"
role="${root}/operator/config/rbac/role.yaml"

shopt -s nullglob
crds=("${crd_dir}"/*.yaml)
if [ "${#crds[@]}" -eq 0 ]; then
	echo "generate.sh: no CRDs in ${crd_dir#"${root}/"}; run operator/generate.sh first" >&2
	exit 1
fi
if [ ! -f "${role}" ]; then
	echo "generate.sh: ${role#"${root}/"} is missing; run operator/generate.sh first" >&2
	exit 1
fi

rm -rf "${chart}/crds"
mkdir -p "${chart}/crds"
for f in "${crds[@]}"; do
	cp "${f}" "${chart}/crds/$(basename "${f}")"
done

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
