# KCM, k0rdent's controller manager: turns KOF's MultiClusterServices into ServiceSets and Sveltos ClusterProfiles,
# and checks KOF's ServiceTemplates, in the layer-2 fidelity test (tests/fidelity) and the demo. Same version as
# go.mod's KCM API module. Built through a wrapper module that requires it: `go install` of its command is refused
# (the module proxy serves no version list for the deprecation check), and one of its modules
# (cluster-api-ipam-provider-infoblox v0.2.2) is absent from the checksum database, so the wrapper's go.sum starts
# as KCM's own go.sum, the checksums KCM's release was built with. The version ldflags are those of KCM's Makefile.
VERSION="${KCM_VERSION:-1.10.0}"
version_line() { go version -m "$1" | grep -E '^[[:space:]]+(mod|dep)[[:space:]]+github.com/K0rdent/kcm[[:space:]]'; }
want() { printf '%s\tv%s\n' github.com/K0rdent/kcm "$VERSION"; }
build() {
  local dir src
  dir="$CACHE/src/kcm-$VERSION"
  mkdir -p "$dir"
  if [ ! -f "$dir/go.sum" ]; then
    src="$(cd "$dir" && go mod download -json "github.com/K0rdent/kcm@v$VERSION" | sed -n 's/.*"Dir": "\(.*\)".*/\1/p')"
    printf 'module kof.local/kcmbuild\n\ngo 1.26.0\n\nrequire github.com/K0rdent/kcm v%s\n\ntool github.com/K0rdent/kcm/cmd\n' \
      "$VERSION" > "$dir/go.mod"
    cp "$src/go.sum" "$dir/go.sum.new" && chmod u+w "$dir/go.sum.new"
    mv "$dir/go.sum.new" "$dir/go.sum"
    (cd "$dir" && go mod tidy) || { rm -f "$dir/go.sum"; return 1; }
  fi
  (cd "$dir" && go build -trimpath \
    -ldflags="-s -w -X github.com/K0rdent/kcm/internal/build.Version=v$VERSION -X github.com/K0rdent/kcm/internal/build.Name=kcm" \
    -o "$1/kcm" github.com/K0rdent/kcm/cmd)
}
