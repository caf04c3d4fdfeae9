# vmalert, the VictoriaMetrics rule evaluator behind VMAlert, from the same release as victoria-metrics: real rules
# and alerts for the tenant proxy's filtering tests.
VERSION="${VICTORIA_METRICS_VERSION:-1.151.0}"
version_line() { "$1" -version; }
want() { echo "vmalert-v$VERSION"; }
build() {
  GOBIN="$1" go install -trimpath \
    -ldflags="-s -w -X github.com/VictoriaMetrics/VictoriaMetrics/lib/buildinfo.Version=vmalert-v$VERSION" \
    "github.com/VictoriaMetrics/VictoriaMetrics/app/vmalert@v$VERSION"
}
