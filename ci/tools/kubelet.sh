# kubelet of the real node the node tests run (internal/harness Node), on containerd from Debian (ci/node.sh).
# From the same wrapper module as kube-apiserver (GROUP: one `go build` makes every missing command of the module).
VERSION="${K8S_VERSION:-1.37.2}"
GROUP="kube-$VERSION"
PKG=k8s.io/kubernetes/cmd/kubelet
version_line() { "$1" --version; }
want() { echo "Kubernetes v$VERSION"; }
group_build() { kube_build "$VERSION" "$@"; }
build() { group_build "$1" "$PKG"; }
