# VictoriaMetrics single-node: real metrics storage for the exporter, data-path and dashboard query tests.
VERSION="${VICTORIA_METRICS_VERSION:-1.151.0}"
# Packed into an image by the tests (tests/node): built without cgo.
STATIC=1
version_line() { "$1" -version; }
want() { echo "victoria-metrics-v$VERSION"; }
build() {
  GOBIN="$1" go install -trimpath \
    -ldflags="-s -w -X github.com/VictoriaMetrics/VictoriaMetrics/lib/buildinfo.Version=victoria-metrics-v$VERSION" \
    "github.com/VictoriaMetrics/VictoriaMetrics/app/victoria-metrics@v$VERSION"
}
