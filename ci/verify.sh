#!/usr/bin/env bash
# Fails when the working tree differs from what is committed after `make generate` (run by `make verify`), or when
# go.mod and go.sum are not tidy.
set -euo pipefail
cd "$(dirname "${BASH_SOURCE[0]}")/.."
if ! tidy="$(go mod tidy -diff 2>&1)"; then
  echo "go.mod and go.sum are not tidy; run 'go mod tidy' and commit:"
  echo "$tidy"
  exit 1
fi
if ! git diff --quiet -- . || [ -n "$(git ls-files --others --exclude-standard)" ]; then
  echo "generated files are out of date; run 'make generate' and commit:"
  git status --short
  git diff --stat
  exit 1
fi
echo "verify: generated files are up to date"
