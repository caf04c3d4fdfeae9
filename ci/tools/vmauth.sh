# vmauth, the VictoriaMetrics auth proxy in front of every regional's storage, from the same release as
# victoria-metrics: proves the routes and credentials the operator writes into VMUsers.
VERSION="${VICTORIA_METRICS_VERSION:-1.151.0}"
version_line() { "$1" -version; }
want() { echo "vmauth-v$VERSION"; }
build() {
  GOBIN="$1" go install -trimpath \
    -ldflags="-s -w -X github.com/VictoriaMetrics/VictoriaMetrics/lib/buildinfo.Version=vmauth-v$VERSION" \
    "github.com/VictoriaMetrics/VictoriaMetrics/app/vmauth@v$VERSION"
}
