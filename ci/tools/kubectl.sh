# kubectl at the control plane's version, from the same wrapper module as kube-apiserver (GROUP: one `go build`
# makes both when both are missing).
VERSION="${K8S_VERSION:-1.37.2}"
GROUP="kube-$VERSION"
PKG=k8s.io/kubernetes/cmd/kubectl
version_line() { "$1" version --client; }
want() { echo "Client Version: v$VERSION"; }
group_build() { kube_build "$VERSION" "$@"; }
build() { group_build "$1" "$PKG"; }
