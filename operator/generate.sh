#!/usr/bin/env bash
# Regenerates the operator's deepcopy functions, CRDs and RBAC with controller-gen.
# Called by `make generate`; `make verify` fails when the result differs from the committed files.
# CONTROLLER_GEN defaults to the repository's bin/controller-gen.
set -euo pipefail

root="$(cd "$(dirname "${BASH_SOURCE[0]}")/.." && pwd)"
cg="${CONTROLLER_GEN:-${root}/bin/controller-gen}"
cd "${root}"

"${cg}" object:headerFile=operator/hack/boilerplate.go.txt paths=./operator/api/... paths=./operator/vmapi/...
"${cg}" crd:allowDangerousTypes=false output:crd:dir=operator/config/crd/bases paths=./operator/api/...
"${cg}" rbac:roleName=kof-operator output:rbac:dir=operator/config/rbac \
	paths=./operator/internal/controller/... paths=./operator
