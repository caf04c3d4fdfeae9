# kube-apiserver of the envtest control plane (minor equal to client-go's). Built through a wrapper module
# (kube_module in ../tools.sh): k8s.io/kubernetes replaces its staging modules with local paths. Shares that module
# with kubectl (GROUP): when both are missing, one `go build` makes both.
VERSION="${K8S_VERSION:-1.37.2}"
GROUP="kube-$VERSION"
PKG=k8s.io/kubernetes/cmd/kube-apiserver
version_line() { "$1" --version; }
want() { echo "Kubernetes v$VERSION"; }
group_build() { kube_build "$VERSION" "$@"; }
build() { group_build "$1" "$PKG"; }
