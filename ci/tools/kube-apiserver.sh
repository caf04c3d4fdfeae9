# kube-apiserver of the envtest control plane (minor equal to client-go's). Built through a wrapper module
# (kube_module in ../tools.sh): k8s.io/kubernetes replaces its staging modules with local paths.
VERSION="${K8S_VERSION:-1.37.2}"
version_line() { "$1" --version; }
want() { echo "Kubernetes v$VERSION"; }
build() { local dir; dir="$(kube_module "$VERSION")"; (cd "$dir" && go build -trimpath -ldflags="$(kube_ldflags "$VERSION")" -o "$1/kube-apiserver" k8s.io/kubernetes/cmd/kube-apiserver); }
