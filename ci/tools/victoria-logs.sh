# VictoriaLogs single-node: real logs and audit-logs storage (and span-shaped records, since VictoriaTraces is not
# served by the Go module proxy) for the exporter and data-path tests.
VERSION="${VICTORIA_LOGS_VERSION:-1.52.1}"
version_line() { "$1" -version; }
want() { echo "victoria-logs-v$VERSION"; }
build() {
  GOBIN="$1" go install -trimpath \
    -ldflags="-s -w -X github.com/VictoriaMetrics/VictoriaMetrics/lib/buildinfo.Version=victoria-logs-v$VERSION" \
    "github.com/VictoriaMetrics/VictoriaLogs/app/victoria-logs@v$VERSION"
}
