# KCM, k0rdent's controller manager: turns KOF's MultiClusterServices into ServiceSets and Sveltos ClusterProfiles,
# and checks KOF's ServiceTemplates, in the layer-2 fidelity test (tests/fidelity) and the demo. Built from KOF's own
# module (go.mod's `tool github.com/K0rdent/kcm/cmd`), so its version is go.mod's KCM API version (one definition)
# and the packages it shares with bin/kof and the tests (client-go, controller-runtime, the Flux, Sveltos and
# Cluster API types) compile once: it is built with the flags of `go build ./tools/kof` (the caller's or the machine's default cgo
# setting, no -trimpath). One of its modules (cluster-api-ipam-provider-infoblox v0.2.2) is absent from the checksum
# database; go.sum holds the checksum KCM's own go.sum gives for it. The version ldflags are those of KCM's Makefile.
VERSION="$(cd "$ROOT" && go list -m -f '{{.Version}}' github.com/K0rdent/kcm)"
VERSION="${VERSION#v}"
version_line() { go version -m "$1" | grep -E '^[[:space:]]+(mod|dep)[[:space:]]+github.com/K0rdent/kcm[[:space:]]'; }
want() { printf '%s\tv%s\n' github.com/K0rdent/kcm "$VERSION"; }
build() {
  (cd "$ROOT" && CGO_ENABLED="$KOF_CGO_ENABLED" go build \
    -ldflags="-s -w -X github.com/K0rdent/kcm/internal/build.Version=v$VERSION -X github.com/K0rdent/kcm/internal/build.Name=kcm" \
    -o "$1/kcm" github.com/K0rdent/kcm/cmd)
}
