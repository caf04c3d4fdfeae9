# Flux source-controller: serves the charts of KOF's HelmRepository/HelmChart objects to helm-controller in the
# demo and e2e tests. v1.7.3 is the partner of helm-controller v1.4.3 (ci/tools/helm-controller.sh; both Flux 2.7.3,
# serving source.toolkit.fluxcd.io/v1 as the CRDs of go.mod's API modules do); v1.7.0 cannot be built from the
# module proxy (its go-git backend v0.40.0 is missing from the checksum database). Built with helm-controller from
# one joint wrapper module (flux_build in ../tools.sh; GROUP: one `go build` makes both when both are missing): the
# two share Helm, client-go, controller-runtime and Flux's pkg modules at the same versions; of their go.mod's
# replace lines the joint module keeps helm-controller's newer go-digest commit and its kustomize v0.20.1 pins (the
# version source-controller requires anyway), and minimal version selection lifts helm-controller's
# fluxcd/pkg/runtime v0.88.0 to source-controller's v0.89.0.
VERSION="${SOURCE_CONTROLLER_VERSION:-1.7.3}"
GROUP=flux
PKG=github.com/fluxcd/source-controller
version_line() { go version -m "$1" | grep -E '^[[:space:]]+(mod|dep)[[:space:]]+github.com/fluxcd/source-controller[[:space:]]'; }
want() { printf '%s\tv%s\n' github.com/fluxcd/source-controller "$VERSION"; }
group_build() { flux_build "$@"; }
build() { group_build "$1" "$TOOL=$PKG"; }
