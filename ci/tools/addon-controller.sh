# Sveltos addon-controller: deploys ClusterProfiles to remote API servers in the layer-2 fidelity test
# (tests/fidelity), the real counterpart of chartlib/sveltos. Built from KOF's own module (go.mod's
# `tool github.com/projectsveltos/addon-controller/cmd`), so its version is go.mod's addon-controller API version,
# which the emulator follows (one definition), and its packages shared with KCM and KOF compile once (GROUP;
# kof_module_build in ../tools.sh links it with a `go build` of its own, as its package name `cmd` is KCM's too).
VERSION="$(cd "$ROOT" && go list -m -f '{{.Version}}' github.com/projectsveltos/addon-controller)"
VERSION="${VERSION#v}"
GROUP=kof-module
PKG=github.com/projectsveltos/addon-controller/cmd
version_line() { go version -m "$1" | grep -E '^[[:space:]]+(mod|dep)[[:space:]]+github.com/projectsveltos/addon-controller[[:space:]]'; }
want() { printf '%s\tv%s\n' github.com/projectsveltos/addon-controller "$VERSION"; }
group_build() { kof_module_build "$@"; }
build() { group_build "$1" "$TOOL=$PKG"; }
