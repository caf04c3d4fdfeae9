#!/usr/bin/env bash
# Builds the tools KOF's tests and demo need from the Go module proxy and links them into bin/.
#
# Each tool is built once per version into a cache folder outside the checkout
# (${KOF_TOOLS_CACHE:-${XDG_CACHE_HOME:-$HOME/.cache}/kof-tools}/<tool>-<version>/), so a fresh clone on the same
# machine only links them. A tool already in bin/ at the pinned version is left alone.
#
# Versions come from the environment (the Makefile passes its variables):
#   K8S_VERSION (kube-apiserver, kubectl), ETCD_VERSION, HELM_VERSION, CONTROLLER_GEN_VERSION, HELM_DOCS_VERSION.
# Usage: ci/tools.sh [tool...]   (default: all of kube-apiserver etcd kubectl helm controller-gen helm-docs)
set -euo pipefail

K8S_VERSION="${K8S_VERSION:-1.37.2}"
ETCD_VERSION="${ETCD_VERSION:-3.7.3}"
HELM_VERSION="${HELM_VERSION:-3.22.0}"
CONTROLLER_GEN_VERSION="${CONTROLLER_GEN_VERSION:-0.23.0}"
HELM_DOCS_VERSION="${HELM_DOCS_VERSION:-1.14.2}"

ROOT="$(cd "$(dirname "${BASH_SOURCE[0]}")/.." && pwd)"
BIN="${BIN:-$ROOT/bin}"
CACHE="${KOF_TOOLS_CACHE:-${XDG_CACHE_HOME:-$HOME/.cache}/kof-tools}"
export CGO_ENABLED=0 GOWORK=off GOFLAGS=-buildvcs=false GOTOOLCHAIN="${GOTOOLCHAIN:-local}"

K8S_MINOR="${K8S_VERSION#*.}"; K8S_MINOR="${K8S_MINOR%%.*}"
STAGING="v0.${K8S_VERSION#1.}" # published version of the k8s.io staging modules matching K8S_VERSION

say() { echo "[tools $(date +%T)] $*" >&2; }

# version_of TOOL: the version line the tool prints, or nothing.
version_of() {
  local exe="$1" tool; tool="$(basename "$exe")"
  [ -x "$exe" ] || return 0
  case "$tool" in
    kube-apiserver) "$exe" --version ;;
    etcd) "$exe" --version | head -1 ;;
    kubectl) "$exe" version --client ;;
    helm) "$exe" version --short ;;
    controller-gen) "$exe" --version ;;
    helm-docs) "$exe" --version ;;
  esac 2>/dev/null || true
}

# want TOOL: the text its version line must contain.
want() {
  case "$1" in
    kube-apiserver) echo "Kubernetes v$K8S_VERSION" ;;
    etcd) echo "etcd Version: $ETCD_VERSION" ;;
    kubectl) echo "Client Version: v$K8S_VERSION" ;;
    helm) echo "v$HELM_VERSION" ;;
    controller-gen) echo "v$CONTROLLER_GEN_VERSION" ;;
    helm-docs) echo "$HELM_DOCS_VERSION" ;;
  esac
}

tool_version() {
  case "$1" in
    kube-apiserver|kubectl) echo "$K8S_VERSION" ;;
    etcd) echo "$ETCD_VERSION" ;;
    helm) echo "$HELM_VERSION" ;;
    controller-gen) echo "$CONTROLLER_GEN_VERSION" ;;
    helm-docs) echo "$HELM_DOCS_VERSION" ;;
  esac
}

is_current() { version_of "$1" | grep -qF -- "$(want "$(basename "$1")")"; }

# Kubernetes binaries cannot be `go install`ed: k8s.io/kubernetes replaces its staging modules with local paths.
# A wrapper module requires k8s.io/kubernetes and points each staging module at its published version.
kube_module() {
  local dir="$CACHE/src/kube-$K8S_VERSION"
  mkdir -p "$dir"
  if [ ! -f "$dir/go.sum" ]; then
    local gomod
    gomod="$(cd "$dir" && go mod download -json "k8s.io/kubernetes@v$K8S_VERSION" | sed -n 's/.*"GoMod": "\(.*\)".*/\1/p')"
    {
      printf 'module kof.local/kubebuild\n\ngo 1.26.0\n\nrequire k8s.io/kubernetes v%s\n\nreplace (\n' "$K8S_VERSION"
      sed -n 's#^[[:space:]]*\(k8s.io/[a-z0-9-]*\) => ./staging/.*#\t\1 => \1 '"$STAGING"'#p' "$gomod"
      # tool directives keep the commands' packages (and so k8s.io/kubernetes) in the module graph through tidy
      printf ')\n\ntool (\n\tk8s.io/kubernetes/cmd/kube-apiserver\n\tk8s.io/kubernetes/cmd/kubectl\n)\n'
    } > "$dir/go.mod"
    (cd "$dir" && go mod tidy) >&2
  fi
  echo "$dir"
}

kube_ldflags() {
  local ld="-s -w" p
  for p in k8s.io/component-base/version k8s.io/client-go/pkg/version; do
    ld+=" -X $p.gitVersion=v$K8S_VERSION -X $p.gitMajor=1 -X $p.gitMinor=$K8S_MINOR"
    ld+=" -X $p.gitTreeState=clean -X $p.buildDate=1970-01-01T00:00:00Z"
  done
  echo "$ld"
}

build() {
  local tool="$1" out="$2" dir
  case "$tool" in
    kube-apiserver|kubectl)
      dir="$(kube_module)"
      (cd "$dir" && go build -trimpath -ldflags="$(kube_ldflags)" -o "$out/$tool" "k8s.io/kubernetes/cmd/$tool") ;;
    etcd)
      dir="$CACHE/src/etcd-$ETCD_VERSION"; mkdir -p "$dir"
      if [ ! -f "$dir/go.sum" ]; then
        # every etcd module at the same version, or tidy mixes releases
        {
          printf 'module kof.local/etcdbuild\n\ngo 1.26.0\n\nrequire (\n'
          for m in api/v3 client/pkg/v3 client/v3 pkg/v3 server/v3; do printf '\tgo.etcd.io/etcd/%s v%s\n' "$m" "$ETCD_VERSION"; done
          printf ')\n\ntool go.etcd.io/etcd/server/v3\n'
        } > "$dir/go.mod"
        (cd "$dir" && go mod tidy) >&2
      fi
      (cd "$dir" && go build -trimpath -ldflags="-s -w" -o "$out/etcd" go.etcd.io/etcd/server/v3) ;;
    helm)
      local h=helm.sh/helm/v3
      GOBIN="$out" go install -trimpath -ldflags="-s -w \
        -X $h/internal/version.version=v$HELM_VERSION -X $h/internal/version.gitTreeState=clean \
        -X $h/pkg/chartutil.k8sVersionMajor=1 -X $h/pkg/chartutil.k8sVersionMinor=$K8S_MINOR \
        -X $h/pkg/lint/rules.k8sVersionMajor=1 -X $h/pkg/lint/rules.k8sVersionMinor=$K8S_MINOR" \
        "$h/cmd/helm@v$HELM_VERSION" ;;
    controller-gen)
      GOBIN="$out" go install -trimpath -ldflags="-s -w" \
        "sigs.k8s.io/controller-tools/cmd/controller-gen@v$CONTROLLER_GEN_VERSION" ;;
    helm-docs)
      GOBIN="$out" go install -trimpath -ldflags="-s -w -X main.version=$HELM_DOCS_VERSION" \
        "github.com/norwoodj/helm-docs/cmd/helm-docs@v$HELM_DOCS_VERSION" ;;
    *) echo "ci/tools.sh: unknown tool $tool" >&2; return 2 ;;
  esac
}

ensure() {
  local tool="$1" cached
  cached="$CACHE/$tool-$(tool_version "$tool")"
  if is_current "$BIN/$tool"; then return 0; fi
  if ! is_current "$cached/$tool"; then
    say "building $tool $(tool_version "$tool") (once per machine; cached in $cached)"
    mkdir -p "$cached"
    build "$tool" "$cached"
    is_current "$cached/$tool" || { echo "ci/tools.sh: $tool built but reports '$(version_of "$cached/$tool")', want '$(want "$tool")'" >&2; return 1; }
  fi
  mkdir -p "$BIN"
  ln -sf "$cached/$tool" "$BIN/$tool"
  say "$tool $(tool_version "$tool") -> bin/$tool"
}

tools=("$@")
[ ${#tools[@]} -gt 0 ] || tools=(etcd kube-apiserver kubectl helm controller-gen helm-docs)
for t in "${tools[@]}"; do ensure "$t"; done
