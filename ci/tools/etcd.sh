# etcd, the store behind the envtest control plane. Built from KOF's own module (go.mod's
# `tool go.etcd.io/etcd/server/v3`): its version is go.mod's etcd version, the one kube-apiserver's etcd client is
# built with (one definition; every etcd module at that version), and what it shares with kube-apiserver (gRPC,
# OpenTelemetry, the etcd API) compiles once (GROUP; kof_module_build in ../tools.sh).
VERSION="$(cd "$ROOT" && go list -m -f '{{.Version}}' go.etcd.io/etcd/server/v3)"
VERSION="${VERSION#v}"
GROUP=kof-module
PKG=go.etcd.io/etcd/server/v3
version_line() { "$1" --version | head -1; }
want() { echo "etcd Version: $VERSION"; }
group_build() { kof_module_build "$@"; }
build() { group_build "$1" "$TOOL=$PKG"; }
