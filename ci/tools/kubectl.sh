# kubectl at the control plane's version, from KOF's own module like kube-apiserver (GROUP: one `go build` makes
# every missing command of the module).
VERSION="$(kube_version)"
GROUP=kof-module
PKG=k8s.io/kubernetes/cmd/kubectl
version_line() { "$1" version --client; }
want() { echo "Client Version: v$VERSION"; }
group_build() { kof_module_build "$@"; }
ldflags() { kube_ldflags "$(kube_version)"; }
build() { group_build "$1" "$TOOL=$PKG"; }
