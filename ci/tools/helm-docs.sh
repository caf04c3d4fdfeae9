# helm-docs: every chart's README.md from README.md.gotmpl and the values comments.
VERSION="${HELM_DOCS_VERSION:-1.14.2}"
version_line() { "$1" --version; }
want() { echo "$VERSION"; }
build() { GOBIN="$1" go install -trimpath -ldflags="-s -w -X main.version=$VERSION" "github.com/norwoodj/helm-docs/cmd/helm-docs@v$VERSION"; }
