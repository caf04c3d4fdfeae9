# KCM, k0rdent's controller manager: turns KOF's MultiClusterServices into ServiceSets and Sveltos ClusterProfiles,
# and checks KOF's ServiceTemplates, in the layer-2 fidelity test (tests/fidelity) and the demo. Built from KOF's own
# module (go.mod's `tool github.com/K0rdent/kcm/cmd`), so its version is go.mod's KCM API version (one definition).
# It shares that module with the Kubernetes commands (GROUP; kof_module_build in ../tools.sh): one `go build` with
# the flags of `go build ./tools/kof` makes every missing one, so the packages they share with each other, bin/kof
# and the tests compile once. One of its modules (cluster-api-ipam-provider-infoblox v0.2.2) is absent from the
# checksum database; go.sum holds the checksum KCM's own go.sum gives for it. The version ldflags are those of KCM's
# Makefile (kcm_ldflags).
VERSION="$(cd "$ROOT" && go list -m -f '{{.Version}}' github.com/K0rdent/kcm)"
VERSION="${VERSION#v}"
GROUP=kof-module
PKG=github.com/K0rdent/kcm/cmd
version_line() { go version -m "$1" | grep -E '^[[:space:]]+(mod|dep)[[:space:]]+github.com/K0rdent/kcm[[:space:]]'; }
want() { printf '%s\tv%s\n' github.com/K0rdent/kcm "$VERSION"; }
group_build() { kof_module_build "$@"; }
ldflags() { kcm_ldflags; }
build() { group_build "$1" "$TOOL=$PKG"; }
