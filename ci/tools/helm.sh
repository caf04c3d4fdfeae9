# The helm CLI (lint, package, push). Without the version ldflags helm assumes Kubernetes v1.20 for kubeVersion.
VERSION="${HELM_VERSION:-3.22.0}"
version_line() { "$1" version --short; }
want() { echo "v$VERSION"; }
build() {
  local h=helm.sh/helm/v3 minor; minor="$(k8s_minor)"
  GOBIN="$1" go install -trimpath -ldflags="-s -w \
    -X $h/internal/version.version=v$VERSION -X $h/internal/version.gitTreeState=clean \
    -X $h/pkg/chartutil.k8sVersionMajor=1 -X $h/pkg/chartutil.k8sVersionMinor=$minor \
    -X $h/pkg/lint/rules.k8sVersionMajor=1 -X $h/pkg/lint/rules.k8sVersionMinor=$minor" \
    "$h/cmd/helm@v$VERSION"
}
