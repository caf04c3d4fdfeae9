#!/usr/bin/env bash
# Builds the programs KOF's tests and demo run (control plane, servers, CLIs) from the Go module proxy and links
# them into bin/.
#
# One file per tool in ci/tools/<tool>.sh declares:
#   VERSION            the pinned version (each file reads an environment override, e.g. ETCD_VERSION)
#   version_line EXE   prints what the built binary says of its version
#   want               prints the text that line must contain
#   build OUT          builds the tool into folder OUT (as OUT/<tool>)
# and may use the helpers below (wrapper_module, replaced_module, joint_module, kof_module_build, kube_version,
# k8s_minor).
#
# and may set GROUP (tools of one module built by one `go build`: the commands of KOF's own module, the Flux
# controllers of their joint module), with PKG (its command package), group_build OUT TOOL=PKG... (builds those
# packages into folder OUT, as OUT/TOOL) and, in KOF's module, ldflags (the link flags of its program), and STATIC=1
# for a program the tests pack into an image (tests/node): it must be built without cgo, and is checked for that.
#
# Which make target needs which tool is ci/tools/targets.tsv, with a rough cold build time per tool; `--for TARGET`
# builds that target's tools. Before building, one line lists what will be built with those times; then one line
# per tool when it starts and ends. Module downloads and compiler output go to a log per tool under the cache
# (printed, with its tail, only when a build fails).
#
# Each tool is built once per version into a cache folder outside the checkout
# (${KOF_TOOLS_CACHE:-${XDG_CACHE_HOME:-$HOME/.cache}/kof-tools}/<tool>-<version>/), so a fresh clone on the same
# machine only links them. A tool already in bin/ at the pinned version is left alone. A lock per tool makes
# concurrent runs wait for one build instead of racing.
# Usage: ci/tools.sh [--for TARGET | tool...]   (default: every tool of ci/tools/targets.tsv)
set -euo pipefail

ROOT="$(cd "$(dirname "${BASH_SOURCE[0]}")/.." && pwd)"
BIN="${BIN:-$ROOT/bin}"
CACHE="${KOF_TOOLS_CACHE:-${XDG_CACHE_HOME:-$HOME/.cache}/kof-tools}"
# The cgo setting `go build` of bin/kof uses (the caller's, else the machine's default), for tools built from KOF's own
# module with bin/kof's flags so that their shared packages compile once (ci/tools/kcm.sh).
KOF_CGO_ENABLED="${CGO_ENABLED:-$(go env CGO_ENABLED)}"
# Every tool links with -s -w (no DWARF), so its packages compile without DWARF too (-dwarf=false: about 9% less CPU
# for a cold `go build k8s.io/client-go/kubernetes`, 191 s instead of 211 s), except those of KOF's module, which
# compile with bin/kof's flags (kof_module_build).
export CGO_ENABLED=0 GOWORK=off GOFLAGS="-buildvcs=false -gcflags=all=-dwarf=false" GOTOOLCHAIN="${GOTOOLCHAIN:-local}"

say() { echo "[tools $(date +%T)] $*" >&2; }

# k8s_minor: the minor of kube_version (the Kubernetes version helm and the control plane assume).
k8s_minor() { local v; v="$(kube_version)"; v="${v#*.}"; echo "${v%%.*}"; }

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
  gomod="$(module_gomod "$dir" "$module@v$version")"
  {
    printf 'module kof.local/%sbuild\n\ngo 1.26.0\n\nrequire %s v%s\n\nreplace (\n' "$name" "$module" "$version"
    replace_lines "$gomod" |
      awk -v skip="$skip" 'BEGIN {n = split(skip, s, "\n"); for (i = 1; i <= n; i++) if (s[i] != "") drop[s[i]] = 1} !($1 in drop)' |
      sed 's/^/\t/'
    for o in "$@"; do printf '\t%s\n' "$o"; done
    printf ')\n\ntool %s\n' "$pkg"
  } > "$dir/go.mod"
  (cd "$dir" && go mod tidy -e) >&2
  echo "$dir"
}

# module_gomod DIR MODULE@VERSION: downloads MODULE@VERSION (from folder DIR) and prints the path of its go.mod.
module_gomod() { (cd "$1" && go mod download -json "$2" | sed -n 's/.*"GoMod": "\(.*\)".*/\1/p'); }

# replace_lines GOMOD: the replace lines of go.mod file GOMOD, one per line without indentation, except those to local
# paths (the published module of that path is used instead).
replace_lines() {
  awk '/^replace \($/ {b=1; next} b && /^\)/ {b=0; next} b {print} /^replace [^(]/ {sub(/^replace /, ""); print}' "$1" |
    grep -v '=>[[:space:]]*\.' | sed 's/^[[:space:]]*//' || true
}

# joint_module NAME "MODULE VERSION PKG"...: one wrapper module for several programs whose go.mod files have replace
# lines (e.g. Flux's source-controller and helm-controller), so that one `go build` makes them all and their shared
# packages compile once. It requires each MODULE@vVERSION, keeps each command package PKG as a tool, and repeats the
# replace lines of every MODULE except those to local paths; where two modules replace the same path, the higher
# version wins (as minimal version selection picks the higher of two requirements). Prints the folder. Tidied with -e
# (see replaced_module).
joint_module() {
  local name="$1" dir s m v pkg; shift
  dir="$CACHE/src/$name"
  mkdir -p "$dir"
  [ -f "$dir/go.sum" ] && { echo "$dir"; return; }
  local requires="" tools="" replaces=""
  for s in "$@"; do
    read -r m v pkg <<<"$s"
    requires+=$'\t'"$m v$v"$'\n'; tools+=$'\t'"$pkg"$'\n'
    replaces+="$(replace_lines "$(module_gomod "$dir" "$m@v$v")")"$'\n'
  done
  {
    printf 'module kof.local/%sbuild\n\ngo 1.26.0\n\nrequire (\n%s)\n\nreplace (\n' "$name" "$requires"
    printf '%s' "$replaces" | awk 'NF >= 3 {printf "%s\t%s\t%s\n", $1, $NF, $0}' | sort -t$'\t' -k1,1 -k2,2V |
      awk -F'\t' '{last[$1] = $3; if (!($1 in seen)) {seen[$1] = 1; order[++n] = $1}} END {for (i = 1; i <= n; i++) print "\t" last[order[i]]}'
    printf ')\n\ntool (\n%s)\n' "$tools"
  } > "$dir/go.mod"
  (cd "$dir" && go mod tidy -e) >&2
  echo "$dir"
}

# flux_build OUT PKG...: builds Flux controller packages (source-controller, helm-controller) into folder OUT with
# one `go build` from their joint module (joint_module) at the versions of ci/tools/source-controller.sh and
# ci/tools/helm-controller.sh, so that the packages they share (Helm, client-go, controller-runtime, Flux's pkg
# modules: most of helm-controller) compile once.
flux_build() {
  local out="$1" sc hc dir; shift
  sc="$(spec source-controller; echo "$VERSION")"; hc="$(spec helm-controller; echo "$VERSION")"
  dir="$(joint_module "flux-source-$sc-helm-$hc" \
    "github.com/fluxcd/source-controller $sc github.com/fluxcd/source-controller" \
    "github.com/fluxcd/helm-controller $hc github.com/fluxcd/helm-controller")"
  (cd "$dir" && go build -trimpath -ldflags="-s -w" -o "$out/" "${@#*=}")
}

# kof_module_build OUT TOOL=PKG...: builds command packages of KOF's own module (go.mod's tool lines: KCM, the
# Kubernetes commands, etcd, helm, controller-gen, addon-controller, VictoriaLogs) into folder OUT, as OUT/TOOL, with
# the flags of `go build ./tools/kof` (the caller's or the machine's default cgo setting, -trimpath), so the
# packages they share with each other, bin/kof and the tests (client-go, apiserver, controller-runtime, Helm, gRPC,
# OpenTelemetry...) compile once per machine. Each program links with the ldflags its tool script's `ldflags`
# prints. One `go build` makes every package whose default binary name (the last path element that is not a major
# version) is not taken by an earlier one; a package whose name is taken (KCM's and addon-controller's are both
# `cmd`) is linked by a `go build` of its own after it, which finds the shared packages compiled. A STATIC member (one
# the tests pack into an image) is built apart with CGO_ENABLED=0 and -trimpath, at go.mod's version all the same:
# with bin/kof's cgo setting it would need the machine's C library.
kof_module_build() {
  local out="$1" pair name flags static first=() later=() args=()
  shift
  declare -A taken=()
  for pair in "$@"; do
    # The script's STATIC mark and link flags, from one `spec` (first line: the mark, may be empty).
    { read -r static; read -r flags; } < <(spec "${pair%%=*}"; echo "$STATIC"; ldflags)
    if [ -n "$static" ]; then
      (cd "$ROOT" && CGO_ENABLED=0 go build -trimpath -ldflags="$flags" -o "$out/${pair%%=*}" "${pair#*=}")
      continue
    fi
    name="$(default_binary "${pair#*=}")"
    if [ -z "${taken[$name]:-}" ]; then taken[$name]=1; first+=("$pair"); else later+=("$pair"); fi
    args+=("-ldflags=${pair#*=}=$flags")
  done
  [ ${#first[@]} -gt 0 ] || return 0
  mkdir -p "$out/.shared"
  (cd "$ROOT" && CGO_ENABLED="$KOF_CGO_ENABLED" GOFLAGS=-buildvcs=false go build -trimpath "${args[@]}" -o "$out/.shared/" "${first[@]#*=}")
  for pair in "${first[@]}"; do mv "$out/.shared/$(default_binary "${pair#*=}")" "$out/${pair%%=*}"; done
  rmdir "$out/.shared"
  for pair in "${later[@]}"; do
    (cd "$ROOT" && CGO_ENABLED="$KOF_CGO_ENABLED" GOFLAGS=-buildvcs=false go build -trimpath "${args[@]}" -o "$out/${pair%%=*}" "${pair#*=}")
  done
}

# default_binary PKG: the file name `go build -o DIR/` gives command package PKG: its last path element, or the one
# before it when that is a major version suffix (go.etcd.io/etcd/server/v3 -> server).
default_binary() {
  local p="$1" last="${1##*/}"
  if [[ "$last" =~ ^v[0-9]+$ ]]; then p="${p%/*}"; last="${p##*/}"; fi
  echo "$last"
}

# kcm_ldflags: the version ldflags of KCM's Makefile, at go.mod's KCM version.
kcm_ldflags() {
  local v; v="$(cd "$ROOT" && go list -m -f '{{.Version}}' github.com/K0rdent/kcm)"
  echo "-s -w -X github.com/K0rdent/kcm/internal/build.Version=$v -X github.com/K0rdent/kcm/internal/build.Name=kcm"
}

# kube_version: go.mod's k8s.io/kubernetes version without the v (the version of every Kubernetes command KOF runs).
kube_version() { local v; v="$(cd "$ROOT" && go list -m -f '{{.Version}}' k8s.io/kubernetes)"; echo "${v#v}"; }

# kube_ldflags VERSION: the version ldflags Kubernetes binaries need (without them they report v0.0.0-master).
kube_ldflags() {
  local version="$1" ld="-s -w" p minor; minor="${version#*.}"; minor="${minor%%.*}"
  for p in k8s.io/component-base/version k8s.io/client-go/pkg/version; do
    ld+=" -X $p.gitVersion=v$version -X $p.gitMajor=1 -X $p.gitMinor=$minor"
    ld+=" -X $p.gitTreeState=clean -X $p.buildDate=1970-01-01T00:00:00Z"
  done
  echo "$ld"
}

# spec TOOL: sources ci/tools/TOOL.sh (TOOL set to the tool's name; `ldflags` prints "-s -w" unless the script defines
# its own) and defines is_current; exits 2 for an unknown tool.
spec() {
  local f="$ROOT/ci/tools/$1.sh"
  [ -f "$f" ] || { echo "ci/tools.sh: unknown tool $1 (no ci/tools/$1.sh)" >&2; exit 2; }
  TOOL="$1" GROUP="" PKG="" STATIC=""
  ldflags() { echo "-s -w"; }
  # shellcheck source=/dev/null
  source "$f"
  # A STATIC tool (one the tests pack into an image: STATIC=1 in its script) is current only when built without cgo,
  # so a binary a cgo build left in the cache is rebuilt.
  is_current() {
    [ -x "$1" ] && { version_line "$1" 2>/dev/null || true; } | grep -qF -- "$(want)" && { [ -z "$STATIC" ] || is_static "$1"; }
  }
}

# is_static BIN: whether the Go program BIN was built with CGO_ENABLED=0 (its build settings, `go version -m`), so that
# it runs in an image without a C library.
is_static() { go version -m "$1" 2>/dev/null | grep -q $'^\tbuild\tCGO_ENABLED=0$'; }

# status TOOL: links bin/TOOL when it or the cache is current and prints nothing; otherwise prints
# "TOOL<TAB>VERSION<TAB>GROUP" (GROUP defaults to the tool itself).
status() (
  spec "$1"
  is_current "$BIN/$1" && exit 0
  if is_current "$CACHE/$1-$VERSION/$1"; then
    mkdir -p "$BIN" && ln -sf "$CACHE/$1-$VERSION/$1" "$BIN/$1"
    exit 0
  fi
  printf '%s\t%s\t%s\n' "$1" "$VERSION" "${GROUP:-$1}"
)

# minutes TOOL: the cold build time of TOOL in ci/tools/targets.tsv.
minutes() { awk -F'\t' -v t="$1" '$1 == t {print $2}' "$PLAN"; }

# build_set TOOL...: builds tools of one group (one tool, or several sharing a module and one `go build`) into their
# cache folders, under each tool's lock, with the output in one log; links them into bin/. On failure it prints the
# log's tail and path and exits 1.
build_set() (
  local t dir log start pkgs=() first="$1" tmp
  mkdir -p "$CACHE/logs"
  log="$CACHE/logs/$(IFS=+; echo "$*").log"
  for t in "$@"; do
    spec "$t"; dir="$CACHE/$t-$VERSION"; mkdir -p "$dir"
    exec {fd}>"$dir/.lock"; flock "$fd"
    pkgs+=("$t=$PKG")
  done
  spec "$first"
  start=$SECONDS
  local mins=0; for t in "$@"; do mins=$((mins + $(minutes "$t"))); done
  say "building $* (about $mins min; log: $log)"
  {
    if [ $# -eq 1 ] && [ -z "$GROUP" ]; then
      is_current "$CACHE/$first-$VERSION/$first" || build "$CACHE/$first-$VERSION"
    else
      tmp="$CACHE/src/$GROUP.out"; rm -rf "$tmp"; mkdir -p "$tmp"
      group_build "$tmp" "${pkgs[@]}"
      for t in "$@"; do spec "$t"; mv "$tmp/$t" "$CACHE/$t-$VERSION/$t"; done
      rm -rf "$tmp"
    fi
  } >"$log" 2>&1 || {
    echo "ci/tools.sh: building $* failed after $((SECONDS - start)) s; last lines of $log:" >&2
    tail -n 25 "$log" >&2
    exit 1
  }
  for t in "$@"; do
    spec "$t"
    [ -z "$STATIC" ] || is_static "$CACHE/$t-$VERSION/$t" || {
      echo "ci/tools.sh: $t built with cgo, but the tests pack it into an image (STATIC=1 in ci/tools/$t.sh): build it with CGO_ENABLED=0" >&2
      exit 1
    }
    is_current "$CACHE/$t-$VERSION/$t" || {
      echo "ci/tools.sh: $t built but reports '$(version_line "$CACHE/$t-$VERSION/$t" 2>&1 | head -1)', want '$(want)'" >&2
      exit 1
    }
    mkdir -p "$BIN" && ln -sf "$CACHE/$t-$VERSION/$t" "$BIN/$t"
  done
  say "built $* in $(( (SECONDS - start) / 60 ))m$(( (SECONDS - start) % 60 ))s -> bin/"
)

PLAN="$ROOT/ci/tools/targets.tsv"

# main [--for TARGET | tool...]: the whole run, in one function so that bash has read all of it before it starts
# (an edit of this file during a long build cannot change what the running build does).
main() {
  # The compiler allocates much and collects often: GOGC=400 cut the CPU of a cold build by about a sixth (user+sys
  # of a cold `go build ./chartlib/render`: 162 s at the default 100, 134 s at 400) for more memory per compile.
  export GOGC="${KOF_BUILD_GOGC:-400}"
  # Every ci/tools/*.sh has a row in the plan and every row a script: a tool the plan lacks would never be built.
  for f in "$ROOT"/ci/tools/*.sh; do
    t="$(basename "$f" .sh)"
    [ -n "$(minutes "$t")" ] || { echo "ci/tools.sh: ci/tools/$t.sh has no row in $PLAN" >&2; exit 2; }
  done
  tools=()
  if [ "${1:-}" = "--for" ]; then
    [ -n "${2:-}" ] || { echo "usage: ci/tools.sh --for TARGET" >&2; exit 2; }
    mapfile -t tools < <(awk -F'\t' -v g="$2" '!/^#/ && NF >= 3 {n = split($3, ts, " "); for (i = 1; i <= n; i++) if (ts[i] == g) print $1}' "$PLAN")
    [ ${#tools[@]} -gt 0 ] || { echo "ci/tools.sh: no tool of $PLAN is for target '$2'" >&2; exit 2; }
  elif [ $# -gt 0 ]; then
    tools=("$@")
  else
    mapfile -t tools < <(awk -F'\t' '!/^#/ && NF >= 3 {print $1}' "$PLAN")
  fi

  # The module's own dependencies, downloaded here with their output in a log, so the `go run` and `go test` of the
  # target print none of it.
  mkdir -p "$CACHE/logs"
  start=$SECONDS
  (cd "$ROOT" && go mod download -x) >"$CACHE/logs/kof-modules.log" 2>&1 || {
    echo "ci/tools.sh: go mod download failed; last lines of $CACHE/logs/kof-modules.log:" >&2
    tail -n 25 "$CACHE/logs/kof-modules.log" >&2
    exit 1
  }
  [ $((SECONDS - start)) -lt 3 ] || say "downloaded KOF's module dependencies in $((SECONDS - start)) s (log: $CACHE/logs/kof-modules.log)"

  missing=()
  for t in "${tools[@]}"; do
    line="$(status "$t")"
    [ -z "$line" ] || missing+=("$line")
  done
  [ ${#missing[@]} -gt 0 ] || exit 0

  total=0 list=""
  for m in "${missing[@]}"; do
    t="${m%%$'\t'*}"; n="$(minutes "$t")"; total=$((total + n)); list+=" $t (~${n}m)"
  done
  # The minutes of the plan were measured two builds at a time, so the wall time is about half their sum.
  say "to build once per machine, about $(( (total + 1) / 2 )) min on two idle cores (two builds at a time):$list; cached in $CACHE"
  # One build per group, in the plan's order, KOF_TOOLS_JOBS (default 2) at once: one build's module downloads and
  # single-threaded link overlap another's compiling.
  jobs_max="${KOF_TOOLS_JOBS:-2}"
  mapfile -t groups < <(printf '%s\n' "${missing[@]}" | awk -F'\t' '!seen[$3]++ {print $3}')
  pids=() fail=0
  for g in "${groups[@]}"; do
    mapfile -t members < <(printf '%s\n' "${missing[@]}" | awk -F'\t' -v g="$g" '$3 == g {print $1}')
    while [ "$(jobs -rp | wc -l)" -ge "$jobs_max" ]; do wait -n || fail=1; done
    build_set "${members[@]}" &
    pids+=($!)
  done
  for p in "${pids[@]}"; do wait "$p" || fail=1; done
  [ "$fail" = 0 ] || { echo "ci/tools.sh: some tools failed to build (messages above)" >&2; exit 1; }
  say "every tool is built"
}

main "$@"; exit $?
