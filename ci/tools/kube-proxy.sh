# kube-proxy of the real node (internal/harness Node), iptables mode inside the node's network namespace: Service
# ClusterIPs (the `kubernetes` Service the in-cluster programs reach the API server through).
# From the same wrapper module as kube-apiserver (GROUP: one `go build` makes every missing command of the module).
VERSION="${K8S_VERSION:-1.37.2}"
GROUP="kube-$VERSION"
PKG=k8s.io/kubernetes/cmd/kube-proxy
version_line() { "$1" --version; }
want() { echo "Kubernetes v$VERSION"; }
group_build() { kube_build "$VERSION" "$@"; }
build() { group_build "$1" "$PKG"; }
