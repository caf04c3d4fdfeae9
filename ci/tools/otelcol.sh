# otelcol, the KOF collector distribution: the OpenTelemetry Collector built by the OpenTelemetry Collector Builder
# with exactly the components of ci/otelcol/manifest.yaml (generated from the charts by `make generate`), at the
# release the charts' collector image runs. It validates every rendered collector config and runs the data-path
# test. The version is the release plus a hash of the manifest, so a changed component list builds anew.
OTELCOL_MANIFEST="$ROOT/ci/otelcol/manifest.yaml"
OTELCOL_RELEASE="$(sed -n 's/^  version: *//p' "$OTELCOL_MANIFEST")"
VERSION="${OTELCOL_VERSION:-$OTELCOL_RELEASE-$(sha256sum "$OTELCOL_MANIFEST" | cut -c1-10)}"
# Packed into an image by the tests (tests/node): built without cgo.
STATIC=1
version_line() { "$1" --version; }
want() { echo "version $VERSION"; }
build() {
  local out="$1" src="$1/src"
  GOBIN="$out/builder" go install -trimpath "go.opentelemetry.io/collector/cmd/builder@v$OTELCOL_RELEASE"
  rm -rf "$src" && mkdir -p "$src"
  sed -e "s#^  output_path: .*#  output_path: $src#" -e "s#^  version: .*#  version: $VERSION#" \
    "$OTELCOL_MANIFEST" > "$out/manifest.yaml"
  "$out/builder/builder" --config "$out/manifest.yaml"
  mv "$src/otelcol-kof" "$out/otelcol"
}
