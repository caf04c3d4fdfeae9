# The helm CLI (lint, package, push). Built from KOF's own module (go.mod's `tool helm.sh/helm/v3/cmd/helm`), so its
# version is go.mod's Helm SDK version (one definition: the CLI the tests run is the SDK chartlib renders with) and
# its packages shared with bin/kof compile once (GROUP; kof_module_build in ../tools.sh). Without the version
# ldflags helm assumes Kubernetes v1.20 for kubeVersion.
VERSION="$(cd "$ROOT" && go list -m -f '{{.Version}}' helm.sh/helm/v3)"
VERSION="${VERSION#v}"
GROUP=kof-module
PKG=helm.sh/helm/v3/cmd/helm
version_line() { "$1" version --short; }
want() { echo "v$VERSION"; }
group_build() { kof_module_build "$@"; }
ldflags() {
  local h=helm.sh/helm/v3 minor; minor="$(k8s_minor)"
  echo "-s -w -X $h/internal/version.version=v$VERSION -X $h/internal/version.gitTreeState=clean" \
    "-X $h/pkg/chartutil.k8sVersionMajor=1 -X $h/pkg/chartutil.k8sVersionMinor=$minor" \
    "-X $h/pkg/lint/rules.k8sVersionMajor=1 -X $h/pkg/lint/rules.k8sVersionMinor=$minor"
}
build() { group_build "$1" "$TOOL=$PKG"; }
