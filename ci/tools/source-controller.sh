# Flux source-controller: serves the charts of KOF's HelmRepository/HelmChart objects to helm-controller in the
# demo and e2e tests. v1.7.3 is the partner of helm-controller v1.4.3 (ci/tools/helm-controller.sh; both Flux 2.7.3,
# serving source.toolkit.fluxcd.io/v1 as the CRDs of go.mod's API modules do); v1.7.0 cannot be built from the
# module proxy (its go-git backend v0.40.0 is missing from the checksum database). Built through a wrapper module:
# its go.mod replaces its api module with a local path and pins go-digest.
VERSION="${SOURCE_CONTROLLER_VERSION:-1.7.3}"
version_line() { go version -m "$1" | grep -E '^[[:space:]]+(mod|dep)[[:space:]]+github.com/fluxcd/source-controller[[:space:]]'; }
want() { printf '%s\tv%s\n' github.com/fluxcd/source-controller "$VERSION"; }
build() {
  local dir
  dir="$(replaced_module source-controller github.com/fluxcd/source-controller "$VERSION" github.com/fluxcd/source-controller)"
  (cd "$dir" && go build -trimpath -ldflags="-s -w" -o "$1/source-controller" github.com/fluxcd/source-controller)
}
