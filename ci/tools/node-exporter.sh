# Prometheus node_exporter: real node metrics for the live dashboard and rule query test (tests/dashboards).
VERSION="${NODE_EXPORTER_VERSION:-1.12.1}"
version_line() { "$1" --version 2>&1; }
want() { echo "node_exporter, version $VERSION"; }
build() {
  GOBIN="$1" go install -trimpath \
    -ldflags="-s -w -X github.com/prometheus/common/version.Version=$VERSION" \
    "github.com/prometheus/node_exporter@v$VERSION"
  mv "$1/node_exporter" "$1/node-exporter"
}
