#!/usr/bin/env bash
# Builds KOF's images (`make images`) or publishes a release (`make release`) through `kof images` and
# `kof release` (package release, docs/release.md), with the facts of the build taken from git so that the same
# commit gives the same digests:
#   SOURCE_DATE_EPOCH  commit time of HEAD (every timestamp of every image and chart)
#   REVISION           HEAD, with `-dirty` when tracked files differ from it
#   VERSION            default: the version of charts/kof/Chart.yaml
#   SOURCE             default: https://github.com/k0rdent/kof
# Usage: ci/release.sh images|release
# Environment: REGISTRY (host[:port][/path]; required by release), PLAIN_HTTP (true: HTTP to the registry), OUT
# (default out/images, out/release/<version>), PLATFORMS (default linux/amd64,linux/arm64) and the four above.
set -euo pipefail
ROOT="$(cd "$(dirname "${BASH_SOURCE[0]}")/.." && pwd)"
cd "$ROOT"
# The images' binaries are static (release/image builds them with cgo off); bin/kof, which builds them, is built with
# the caller's cgo setting like `make build` and `make test` build it, so that on a machine that ran those its
# packages are compiled already (cgo on and off compile the net package, and everything above it, apart).
export GOTOOLCHAIN="${GOTOOLCHAIN:-local}"

mode="${1:-}"
case "$mode" in
  images | release) ;;
  *) echo "usage: ci/release.sh images|release" >&2; exit 2 ;;
esac

if [ -z "${SOURCE_DATE_EPOCH:-}" ] || [ -z "${REVISION:-}" ]; then
  git rev-parse --verify -q HEAD >/dev/null || {
    echo "ci/release.sh: not a git checkout with a commit; set SOURCE_DATE_EPOCH and REVISION" >&2; exit 1; }
fi
SOURCE_DATE_EPOCH="${SOURCE_DATE_EPOCH:-$(git log -1 --format=%ct)}"
if [ -z "${REVISION:-}" ]; then
  REVISION="$(git rev-parse HEAD)"
  git diff --quiet HEAD -- || REVISION="$REVISION-dirty"
fi
VERSION="${VERSION:-$(sed -n 's/^version: *//p' charts/kof/Chart.yaml)}"
SOURCE="${SOURCE:-https://github.com/k0rdent/kof}"
PLATFORMS="${PLATFORMS:-linux/amd64,linux/arm64}"
REGISTRY="${REGISTRY:-}"
if [ "$mode" = images ]; then OUT="${OUT:-out/images}"; else OUT="${OUT:-out/release/$VERSION}"; fi

args=(--version "$VERSION" --revision "$REVISION" --source "$SOURCE" --source-date-epoch "$SOURCE_DATE_EPOCH"
  --platforms "$PLATFORMS" --out "$OUT")
[ -n "$REGISTRY" ] && args+=(--registry "$REGISTRY")
[ "${PLAIN_HTTP:-}" = true ] && args+=(--plain-http)

bash ci/kof.sh
exec bin/kof "$mode" "${args[@]}"
