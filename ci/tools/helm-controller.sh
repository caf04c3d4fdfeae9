# Flux helm-controller: installs every KOF HelmRelease in the demo and e2e tests. Its source-controller partner is
# ci/tools/source-controller.sh (same Flux minor); both are built from one joint wrapper module (flux_build in
# ../tools.sh; GROUP: one `go build` makes both when both are missing, and most of helm-controller's packages are
# source-controller's).
VERSION="${HELM_CONTROLLER_VERSION:-1.4.3}"
GROUP=flux
PKG=github.com/fluxcd/helm-controller
version_line() { go version -m "$1" | grep -E '^[[:space:]]+(mod|dep)[[:space:]]+github.com/fluxcd/helm-controller[[:space:]]'; }
want() { printf '%s\tv%s\n' github.com/fluxcd/helm-controller "$VERSION"; }
group_build() { flux_build "$@"; }
build() { group_build "$1" "$TOOL=$PKG"; }
