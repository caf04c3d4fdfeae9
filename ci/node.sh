#!/usr/bin/env bash
# Installs the node's programs Debian is the only source of here, when any is missing: containerd (the container
# runtime the kubelet of internal/harness Node talks to), runc (what containerd runs containers with), the CNI
# plugins (bridge, host-local, portmap, loopback: the pods' network) and iptables (kube-proxy's and portmap's rules,
# inside the node's own network namespace). Nothing is started or enabled: the node tests start containerd
# themselves, inside namespaces of their own. Called by `make test`; needs root (apt-get) only when it installs.
set -euo pipefail
missing=()
command -v containerd >/dev/null 2>&1 && command -v containerd-shim-runc-v2 >/dev/null 2>&1 || missing+=(containerd)
command -v runc >/dev/null 2>&1 || missing+=(runc)
[ -x /usr/lib/cni/bridge ] && [ -x /usr/lib/cni/host-local ] && [ -x /usr/lib/cni/portmap ] &&
  [ -x /usr/lib/cni/loopback ] || missing+=(containernetworking-plugins)
command -v iptables-restore >/dev/null 2>&1 || missing+=(iptables)
[ ${#missing[@]} -gt 0 ] || exit 0
echo "[node] not found: installing Debian's ${missing[*]} with apt-get" >&2
export DEBIAN_FRONTEND=noninteractive
apt-get update -qq
# policy-rc.d 101: the packages' maintainer scripts must not start a containerd of the machine's own.
had_policy=0
[ -e /usr/sbin/policy-rc.d ] && had_policy=1
[ "$had_policy" = 1 ] || { printf '#!/bin/sh\nexit 101\n' > /usr/sbin/policy-rc.d; chmod +x /usr/sbin/policy-rc.d; }
status=0
apt-get install -y -qq --no-install-recommends "${missing[@]}" >/dev/null || status=$?
[ "$had_policy" = 1 ] || rm -f /usr/sbin/policy-rc.d
[ "$status" = 0 ] || { echo "[node] apt-get install ${missing[*]} failed (status $status)" >&2; exit 1; }
for p in containerd containerd-shim-runc-v2 runc iptables-restore /usr/lib/cni/bridge; do
  command -v "$p" >/dev/null 2>&1 || { echo "[node] apt-get installed no $p" >&2; exit 1; }
done
echo "[node] $(containerd --version 2>/dev/null); $(runc --version 2>/dev/null | head -1)" >&2
