# registry: the CNCF distribution registry (OCI distribution spec), a real registry on loopback for `make release`
# and the release end-to-end test (images and charts pushed over plain HTTP).
VERSION="${REGISTRY_VERSION:-3.1.2}"
version_line() { "$1" --version; }
want() { echo "v$VERSION"; }
build() {
  GOBIN="$1" go install -trimpath \
    -ldflags="-s -w -X github.com/distribution/distribution/v3/version.version=v$VERSION" \
    "github.com/distribution/distribution/v3/cmd/registry@v$VERSION"
}
