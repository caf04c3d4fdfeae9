# Flux helm-controller: installs every KOF HelmRelease in the demo and e2e tests. Its source-controller partner is
# ci/tools/source-controller.sh (same Flux minor). Built through a wrapper module: its go.mod replaces its api module
# with a local path and pins go-digest and kustomize.
VERSION="${HELM_CONTROLLER_VERSION:-1.4.3}"
version_line() { go version -m "$1" | grep -E '^[[:space:]]+(mod|dep)[[:space:]]+github.com/fluxcd/helm-controller[[:space:]]'; }
want() { printf '%s\tv%s\n' github.com/fluxcd/helm-controller "$VERSION"; }
build() {
  local dir
  dir="$(replaced_module helm-controller github.com/fluxcd/helm-controller "$VERSION" github.com/fluxcd/helm-controller)"
  (cd "$dir" && go build -trimpath -ldflags="-s -w" -o "$1/helm-controller" github.com/fluxcd/helm-controller)
}
