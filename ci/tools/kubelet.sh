# kubelet of the real node the node tests run (internal/harness Node), on containerd from Debian (ci/node.sh).
# From KOF's own module like kube-apiserver (GROUP: one `go build` makes every missing command of the module).
VERSION="$(kube_version)"
GROUP=kof-module
PKG=k8s.io/kubernetes/cmd/kubelet
version_line() { "$1" --version; }
want() { echo "Kubernetes v$VERSION"; }
group_build() { kof_module_build "$@"; }
ldflags() { kube_ldflags "$(kube_version)"; }
build() { group_build "$1" "$TOOL=$PKG"; }
