# VictoriaLogs single-node: real logs and audit-logs storage (and span-shaped records, since VictoriaTraces is not
# served by the Go module proxy) for the exporter and data-path tests. Built from KOF's own module (go.mod's
# `tool github.com/VictoriaMetrics/VictoriaLogs/app/victoria-logs`): its version is go.mod's VictoriaLogs version,
# the one whose query language KOF's code parses (one definition), downloaded with KOF's modules (GROUP).
VERSION="$(cd "$ROOT" && go list -m -f '{{.Version}}' github.com/VictoriaMetrics/VictoriaLogs)"
VERSION="${VERSION#v}"
GROUP=kof-module
PKG=github.com/VictoriaMetrics/VictoriaLogs/app/victoria-logs
# Packed into an image by the tests (tests/node): built without cgo, apart from the group's cgo build.
STATIC=1
version_line() { "$1" -version; }
want() { echo "victoria-logs-v$VERSION"; }
group_build() { kof_module_build "$@"; }
ldflags() { echo "-s -w -X github.com/VictoriaMetrics/VictoriaMetrics/lib/buildinfo.Version=victoria-logs-v$VERSION"; }
build() { group_build "$1" "$TOOL=$PKG"; }
