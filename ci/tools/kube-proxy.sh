# kube-proxy of the real node (internal/harness Node), iptables mode inside the node's network namespace: Service
# ClusterIPs (the `kubernetes` Service the in-cluster programs reach the API server through).
# From KOF's own module like kube-apiserver (GROUP: one `go build` makes every missing command of the module).
VERSION="$(kube_version)"
GROUP=kof-module
PKG=k8s.io/kubernetes/cmd/kube-proxy
version_line() { "$1" --version; }
want() { echo "Kubernetes v$VERSION"; }
group_build() { kof_module_build "$@"; }
ldflags() { kube_ldflags "$(kube_version)"; }
build() { group_build "$1" "$TOOL=$PKG"; }
