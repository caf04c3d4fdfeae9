# controller-gen: the operator's CRDs, RBAC and deepcopy, and the third-party CRDs (ci/crds.sh). Built from KOF's own
# module (go.mod's `tool sigs.k8s.io/controller-tools/cmd/controller-gen`): its version is go.mod's controller-tools
# version (one definition), and the Kubernetes API packages it loads compile once with KOF's (GROUP).
VERSION="$(cd "$ROOT" && go list -m -f '{{.Version}}' sigs.k8s.io/controller-tools)"
VERSION="${VERSION#v}"
GROUP=kof-module
PKG=sigs.k8s.io/controller-tools/cmd/controller-gen
version_line() { "$1" --version; }
want() { echo "v$VERSION"; }
group_build() { kof_module_build "$@"; }
ldflags() { echo "-s -w -X sigs.k8s.io/controller-tools/pkg/version.version=v$VERSION"; }
build() { group_build "$1" "$TOOL=$PKG"; }
