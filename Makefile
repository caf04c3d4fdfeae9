# KOF — build, test and demo. `make` (or `make help`) lists the targets.
SHELL := bash
.SHELLFLAGS := -eu -o pipefail -c
.DEFAULT_GOAL := help
MAKEFLAGS += --no-builtin-rules --warn-undefined-variables

# Tool versions are pinned in ci/tools/<tool>.sh (built from the Go module proxy into bin/, cached per machine).

ROOT     := $(abspath .)
BIN      := $(ROOT)/bin
GO       ?= go
GOTEST_TIMEOUT ?= 18m
# Test packages run at once by make test (ci/test.sh).
GOTEST_P ?= 4
# GOGC of the compiles make runs for tools, the demo's CLI and the release platforms (ci/tools.sh explains the value).
KOF_BUILD_GOGC ?= 400
SCENARIO ?= 01-regional-child
KEEP ?=
# Release variables (docs/release.md): REGISTRY=host[:port][/path], VERSION=x.y.z (default: the umbrella chart's
# version), PLAIN_HTTP=true for a registry on loopback, OUT (default out/images, out/release/<version>).
REGISTRY   ?=
VERSION    ?=
PLAIN_HTTP ?=
OUT        ?=
# The archive `make support-bundle` writes (default: kof-support-bundle-<UTC time>.tar.gz in this folder).
BUNDLE     ?=
CHARTS   := $(sort $(dir $(wildcard charts/*/Chart.yaml)))
export KUBEBUILDER_ASSETS := $(BIN)

.PHONY: help
help: ## Show this help.
	@awk 'BEGIN {FS = ":.*## "} /^[a-zA-Z0-9_-]+:.*## / {printf "  %-16s %s\n", $$1, $$2}' $(MAKEFILE_LIST)

.PHONY: tools
tools: ## Build every program in ci/tools/ (control plane, servers, CLIs) into bin/ (cached; skipped when present).
	@bash ci/tools.sh

.PHONY: crds
crds: ## Generate the third-party CRDs from their upstream Go types into bin/crds/.
	@bash ci/tools.sh --for crds
	@bash ci/crds.sh

.PHONY: build
build: ## Build the kof CLI and the kof-operator into bin/.
	@GO=$(GO) bash ci/kof.sh
	$(GO) build -trimpath -o $(BIN)/kof-operator ./cmd/kof-operator

.PHONY: generate
generate: ## Regenerate CRDs, RBAC, deepcopy, chart schemas, chart READMEs and install bundles.
	@bash ci/tools.sh --for generate
	@bash ci/generate.sh

.PHONY: verify
verify: generate ## Regenerate everything generated and fail if the tree differs from what is committed.
	@bash ci/verify.sh

.PHONY: lint
lint: ## gofmt and go vet over the whole module.
	@out="$$(gofmt -l $$(git ls-files '*.go'))"; if [ -n "$$out" ]; then echo "gofmt needed:"; echo "$$out"; exit 1; fi
	$(GO) vet ./...

.PHONY: lint-charts
lint-charts: ## helm lint --strict on every chart, with its defaults and each ci/ values file.
	@bash ci/tools.sh --for lint-charts
	@bash ci/lint-charts.sh

.PHONY: test
test: ## Run every test: unit, chart goldens, scenarios, envtest, a real node, end-to-end and browser, and every benchmark once (Go; chromium, containerd, runc and the CNI plugins from apt).
	@bash ci/packages.sh bash ci/tools.sh --for test
	@bash ci/crds.sh
	@GOGC=$(KOF_BUILD_GOGC) GO=$(GO) bash ci/kof.sh
	GOGC=$(KOF_BUILD_GOGC) $(BIN)/kof images --compile-only --platforms linux/$$($(GO) env GOARCH)
	@KOF_BUILD_GOGC=$(KOF_BUILD_GOGC) GO=$(GO) GOTEST_TIMEOUT=$(GOTEST_TIMEOUT) GOTEST_P=$(GOTEST_P) bash ci/test.sh

.PHONY: bench
bench: ## Run the Go benchmarks and compare chartlib with bin/helm template on the same charts.
	@bash ci/tools.sh --for bench
	@bash ci/crds.sh
	@bash ci/bench.sh

.PHONY: demo
demo: ## Install KOF on a local control plane and show what every cluster receives (SCENARIO=name; KEEP=1 keeps it running for kof doctor until Ctrl-C).
	@bash ci/tools.sh --for demo
	@bash ci/crds.sh
	@GOGC=$(KOF_BUILD_GOGC) GO=$(GO) bash ci/kof.sh
	$(BIN)/kof demo --scenario $(SCENARIO) --out out/$(SCENARIO) $(if $(KEEP),--keep)

.PHONY: support-bundle
support-bundle: ## Write a support bundle of the management cluster of your kubeconfig, read-only (BUNDLE=file.tar.gz).
	$(GO) run ./tools/kof support-bundle $(if $(BUNDLE),-o $(BUNDLE))

.PHONY: images
images: ## Build an OCI image per binary of cmd/: an OCI layout in out/images, or pushed to REGISTRY.
	@REGISTRY="$(REGISTRY)" VERSION="$(VERSION)" PLAIN_HTTP="$(PLAIN_HTTP)" OUT="$(OUT)" bash ci/release.sh images

.PHONY: release
release: ## Publish images, charts (images pinned), SBOMs and a manifest to REGISTRY=host/path [VERSION=x.y.z].
	@REGISTRY="$(REGISTRY)" VERSION="$(VERSION)" PLAIN_HTTP="$(PLAIN_HTTP)" OUT="$(OUT)" bash ci/release.sh release

.PHONY: clean
clean: ## Remove bin/ links and out/ (the per-machine tool cache stays).
	rm -rf bin out
