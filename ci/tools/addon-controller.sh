# Sveltos addon-controller: deploys ClusterProfiles to remote API servers in the layer-2 fidelity test
# (tests/fidelity), the real counterpart of chartlib/sveltos. Same version as go.mod's addon-controller API module,
# which the emulator follows. Built through a wrapper module: its go.mod pins go-digest with a replace line. Two of
# its versions are not served here, so the nearest served ones stand in: go-digest at the commit go.mod's other
# modules use, and Flux's http/fetch v0.25.0 for v0.24.0 (absent from the checksum database).
VERSION="${ADDON_CONTROLLER_VERSION:-1.9.0}"
version_line() { go version -m "$1" | grep -E '^[[:space:]]+(mod|dep)[[:space:]]+github.com/projectsveltos/addon-controller[[:space:]]'; }
want() { printf '%s\tv%s\n' github.com/projectsveltos/addon-controller "$VERSION"; }
build() {
  local dir
  dir="$(replaced_module addon-controller github.com/projectsveltos/addon-controller "$VERSION" \
    github.com/projectsveltos/addon-controller/cmd \
    'github.com/opencontainers/go-digest => github.com/opencontainers/go-digest v1.0.1-0.20250116041648-1e56c6daea3b' \
    'github.com/fluxcd/pkg/http/fetch => github.com/fluxcd/pkg/http/fetch v0.25.0')"
  (cd "$dir" && go build -trimpath -ldflags="-s -w" -o "$1/addon-controller" github.com/projectsveltos/addon-controller/cmd)
}
