# MinIO: a real S3 server (multipart uploads, path-style addressing, object lock) for the exporter tests. MinIO
# publishes no semantic-version tags, so the module proxy serves it as a pseudo-version of one commit.
VERSION="${MINIO_VERSION:-v0.0.0-20260212201848-7aac2a2c5b7c}"
# Packed into an image by the tests (tests/node): built without cgo.
STATIC=1
version_line() { "$1" --version; }
want() { echo "commit-id=${VERSION##*-}"; }
build() {
  local m=github.com/minio/minio/cmd commit="${VERSION##*-}" t day clock
  t="${VERSION#v0.0.0-}"; t="${t%%-*}" # the commit time of the pseudo-version, yyyymmddhhmmss
  day="${t:0:4}-${t:4:2}-${t:6:2}"; clock="${t:8:2}:${t:10:2}:${t:12:2}"
  GOBIN="$1" go install -trimpath -ldflags="-s -w \
    -X $m.Version=${day}T${clock}Z -X $m.ReleaseTag=DEVELOPMENT.${day}T${clock//:/-}Z \
    -X $m.CommitID=$commit -X $m.ShortCommitID=$commit -X $m.GOPATH= -X $m.GOROOT=" \
    "github.com/minio/minio@$VERSION"
}
