# controller-gen: the operator's CRDs, RBAC and deepcopy, and the third-party CRDs (ci/crds.sh).
VERSION="${CONTROLLER_GEN_VERSION:-0.23.0}"
version_line() { "$1" --version; }
want() { echo "v$VERSION"; }
build() { GOBIN="$1" go install -trimpath -ldflags="-s -w" "sigs.k8s.io/controller-tools/cmd/controller-gen@v$VERSION"; }
