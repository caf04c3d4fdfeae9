#!/usr/bin/env bash
# Builds the programs KOF's tests and demo run (control plane, servers, CLIs) from the Go module proxy and links
# them into bin/.
#
# One file per tool in ci/tools/<tool>.sh declares:
#   VERSION            the pinned version (each file reads an environment override, e.g. ETCD_VERSION)
#   version_line EXE   prints what the built binary says of its version
#   want               prints the text that line must contain
#   build OUT          builds the tool into folder OUT (as OUT/<tool>)
# and may use the helpers below (wrapper_module, replaced_module, kube_module, kube_ldflags, k8s_minor).
#
# Each tool is built once per version into a cache folder outside the checkout
# (${KOF_TOOLS_CACHE:-${XDG_CACHE_HOME:-$HOME/.cache}/kof-tools}/<tool>-<version>/), so a fresh clone on the same
# machine only links them. A tool already in bin/ at the pinned version is left alone. A lock per tool makes
# concurrent runs wait for one build instead of racing.
# Usage: ci/tools.sh [tool...]   (default: every ci/tools/*.sh)
set -euo pipefail

ROOT="$(cd "$(dirname "${BASH_SOURCE[0]}")/.." && pwd)"
BIN="${BIN:-$ROOT/bin}"
CACHE="${KOF_TOOLS_CACHE:-${XDG_CACHE_HOME:-$HOME/.cache}/kof-tools}"
export CGO_ENABLED=0 GOWORK=off GOFLAGS=-buildvcs=false GOTOOLCHAIN="${GOTOOLCHAIN:-local}"

say() { echo "[tools $(date +%T)] $*" >&2; }

# k8s_minor: the minor of K8S_VERSION (the Kubernetes version helm and the control plane assume).
k8s_minor() { local v="${K8S_VERSION:-1.37.2}"; v="${v#*.}"; echo "${v%%.*}"; }

# wrapper_module NAME VERSION BODY: a module folder under the cache whose go.mod is `module kof.local/<NAME>build`
# followed by BODY (require/replace/tool lines), tidied once; prints the folder. Used for programs that cannot be
# `go install`ed because their own go.mod has replace lines.
wrapper_module() {
  local name="$1" version="$2" body="$3" dir
  dir="$CACHE/src/$name-$version"
  mkdir -p "$dir"
  if [ ! -f "$dir/go.sum" ]; then
    printf 'module kof.local/%sbuild\n\ngo 1.26.0\n\n%s\n' "$name" "$body" > "$dir/go.mod"
    (cd "$dir" && go mod tidy) >&2
  fi
  echo "$dir"
}

# replaced_module NAME MODULE VERSION PKG [OVERRIDE...]: the wrapper module for a program whose go.mod has replace
# lines: it requires MODULE@VERSION, repeats MODULE's replace lines except those to local paths (the published
# module of that path is used instead) and those an OVERRIDE ("path => path version") names, adds each OVERRIDE, and
# keeps the command package PKG as a tool; prints the folder. An OVERRIDE stands in for a version the module proxy
# or the checksum database does not serve. Tidied with -e: tests of the program's own dependencies may import modules
# the checksum database does not list; the build itself still needs every module it compiles verified in go.sum.
replaced_module() {
  local name="$1" module="$2" version="$3" pkg="$4" gomod dir o skip=""
  shift 4
  for o in "$@"; do skip+="${o%% *}"$'\n'; done
  dir="$CACHE/src/$name-$version"
  mkdir -p "$dir"
  [ -f "$dir/go.sum" ] && { echo "$dir"; return; }
  gomod="$(cd "$dir" && go mod download -json "$module@v$version" | sed -n 's/.*"GoMod": "\(.*\)".*/\1/p')"
  {
    printf 'module kof.local/%sbuild\n\ngo 1.26.0\n\nrequire %s v%s\n\nreplace (\n' "$name" "$module" "$version"
    awk '/^replace \($/ {b=1; next} b && /^\)/ {b=0; next} b {print} /^replace [^(]/ {sub(/^replace /, ""); print}' "$gomod" |
      grep -v '=>[[:space:]]*\.' | sed 's/^[[:space:]]*//' |
      awk -v skip="$skip" 'BEGIN {n = split(skip, s, "\n"); for (i = 1; i <= n; i++) if (s[i] != "") drop[s[i]] = 1} !($1 in drop)' |
      sed 's/^/\t/'
    for o in "$@"; do printf '\t%s\n' "$o"; done
    printf ')\n\ntool %s\n' "$pkg"
  } > "$dir/go.mod"
  (cd "$dir" && go mod tidy -e) >&2
  echo "$dir"
}

# kube_module VERSION: the wrapper module for kube-apiserver and kubectl. It requires k8s.io/kubernetes and points
# each staging module at its published v0.<minor>.<patch> (k8s.io/kubernetes replaces them with local paths).
kube_module() {
  local version="$1" dir staging gomod
  dir="$CACHE/src/kube-$version"; staging="v0.${version#1.}"
  mkdir -p "$dir"
  if [ ! -f "$dir/go.sum" ]; then
    gomod="$(cd "$dir" && go mod download -json "k8s.io/kubernetes@v$version" | sed -n 's/.*"GoMod": "\(.*\)".*/\1/p')"
    {
      printf 'module kof.local/kubebuild\n\ngo 1.26.0\n\nrequire k8s.io/kubernetes v%s\n\nreplace (\n' "$version"
      sed -n 's#^[[:space:]]*\(k8s.io/[a-z0-9-]*\) => ./staging/.*#\t\1 => \1 '"$staging"'#p' "$gomod"
      # tool directives keep the commands' packages (and so k8s.io/kubernetes) in the module graph through tidy
      printf ')\n\ntool (\n\tk8s.io/kubernetes/cmd/kube-apiserver\n\tk8s.io/kubernetes/cmd/kubectl\n)\n'
    } > "$dir/go.mod"
    (cd "$dir" && go mod tidy) >&2
  fi
  echo "$dir"
}

# kube_ldflags VERSION: the version ldflags Kubernetes binaries need (without them they report v0.0.0-master).
kube_ldflags() {
  local version="$1" ld="-s -w" p minor; minor="${version#*.}"; minor="${minor%%.*}"
  for p in k8s.io/component-base/version k8s.io/client-go/pkg/version; do
    ld+=" -X $p.gitVersion=v$version -X $p.gitMajor=1 -X $p.gitMinor=$minor"
    ld+=" -X $p.gitTreeState=clean -X $p.buildDate=1970-01-01T00:00:00Z"
  done
  echo "$ld"
}

# ensure TOOL: links bin/TOOL to a cached build at the pinned version, building it first when missing.
ensure() (
  local tool="$1" spec cached
  spec="$ROOT/ci/tools/$tool.sh"
  [ -f "$spec" ] || { echo "ci/tools.sh: unknown tool $tool (no ci/tools/$tool.sh)" >&2; exit 2; }
  # shellcheck source=/dev/null
  source "$spec"
  is_current() { [ -x "$1" ] && { version_line "$1" 2>/dev/null || true; } | grep -qF -- "$(want)"; }
  is_current "$BIN/$tool" && exit 0
  cached="$CACHE/$tool-$VERSION"
  mkdir -p "$cached"
  exec 9>"$cached/.lock"
  flock 9
  if ! is_current "$cached/$tool"; then
    say "building $tool $VERSION (once per machine; cached in $cached)"
    build "$cached"
    is_current "$cached/$tool" || {
      echo "ci/tools.sh: $tool built but reports '$(version_line "$cached/$tool" 2>&1 | head -1)', want '$(want)'" >&2
      exit 1
    }
  fi
  mkdir -p "$BIN"
  ln -sf "$cached/$tool" "$BIN/$tool"
  say "$tool $VERSION -> bin/$tool"
)

tools=("$@")
if [ ${#tools[@]} -eq 0 ]; then
  for f in "$ROOT"/ci/tools/*.sh; do tools+=("$(basename "$f" .sh)"); done
fi
for t in "${tools[@]}"; do ensure "$t"; done
