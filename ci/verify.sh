#!/usr/bin/env bash
# Fails when the working tree differs from what is committed after `make generate` (run by `make verify`), when
# go.mod and go.sum are not tidy, or when a folder has no row in docs/AGENTS.md (tests/layout).
set -euo pipefail
cd "$(dirname "${BASH_SOURCE[0]}")/.."
if ! tidy="$(go mod tidy -diff 2>&1)"; then
  echo "go.mod and go.sum are not tidy; run 'go mod tidy' and commit:"
  echo "$tidy"
  exit 1
fi
if ! layout="$(go test -count=1 ./tests/layout/ 2>&1)"; then
  echo "docs/AGENTS.md does not map every folder:"
  echo "$layout"
  exit 1
fi
if ! git diff --quiet -- . || [ -n "$(git ls-files --others --exclude-standard)" ]; then
  echo "generated files are out of date; run 'make generate' and commit:"
  git status --short
  git diff --stat
  exit 1
fi
echo "verify: generated files are up to date"
