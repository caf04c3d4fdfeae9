#!/usr/bin/env bash
# Installs Debian's chromium for the browser tests (tests/ui, driven through chromedp) when it is missing; does
# nothing when a chromium is already on PATH. Chromium is not built from the Go module proxy: Debian's package is
# its only source here (as for the node's containerd, runc and CNI plugins, ci/node.sh). Called by `make test`;
# needs root (apt-get) only when it installs.
set -euo pipefail
if command -v chromium >/dev/null 2>&1; then
  exit 0
fi
echo "[chromium] not found: installing Debian's chromium with apt-get" >&2
export DEBIAN_FRONTEND=noninteractive
apt-get update -qq
apt-get install -y -qq --no-install-recommends chromium >/dev/null
command -v chromium >/dev/null 2>&1 || { echo "[chromium] apt-get installed no chromium binary" >&2; exit 1; }
echo "[chromium] $(chromium --version 2>/dev/null)" >&2
