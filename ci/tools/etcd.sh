# etcd, the store behind the envtest control plane. Every etcd module at one version, or tidy mixes releases.
VERSION="${ETCD_VERSION:-3.7.3}"
version_line() { "$1" --version | head -1; }
want() { echo "etcd Version: $VERSION"; }
build() {
  local dir
  dir="$(wrapper_module etcd "$VERSION" "$(
    printf 'require (\n'
    for m in api/v3 client/pkg/v3 client/v3 pkg/v3 server/v3; do printf '\tgo.etcd.io/etcd/%s v%s\n' "$m" "$VERSION"; done
    printf ')\n\ntool go.etcd.io/etcd/server/v3\n')")"
  (cd "$dir" && go build -trimpath -ldflags="-s -w" -o "$1/etcd" go.etcd.io/etcd/server/v3)
}
