# kubectl at the control plane's version, from the same wrapper module as kube-apiserver.
VERSION="${K8S_VERSION:-1.37.2}"
version_line() { "$1" version --client; }
want() { echo "Client Version: v$VERSION"; }
build() { local dir; dir="$(kube_module "$VERSION")"; (cd "$dir" && go build -trimpath -ldflags="$(kube_ldflags "$VERSION")" -o "$1/kubectl" k8s.io/kubernetes/cmd/kubectl); }
