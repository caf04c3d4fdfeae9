package collector

import (
	"fmt"
	"slices"
)

// Module paths of the two collector repositories.
const (
	coreModules    = "go.opentelemetry.io/collector/"
	contribModules = "github.com/open-telemetry/opentelemetry-collector-contrib/"
)

// Module is the Go module that provides one component type.
type Module struct {
	// Kind and Type identify the component (`exporters`, `prometheusremotewrite`).
	Kind Kind
	Type string
	// Path is the module path.
	Path string
	// NotServed lists the releases (`0.145.0`) at which the Go module proxy or its checksum database does not serve
	// the module, so the distribution of that release is built without it.
	NotServed []string
}

// ServedAt reports whether the module can be fetched at release.
func (m Module) ServedAt(release string) bool { return !slices.Contains(m.NotServed, release) }

// ID returns `kind/type`, the way Manifest and Validator name a component type.
func (m Module) ID() string { return string(m.Kind) + "/" + m.Type }

// Modules returns the module of every component type KOF's collector configs may use. Each module's releases
// follow the collector's: `v<release>`. Source: the component lists of opentelemetry-collector and
// opentelemetry-collector-contrib (each component's README names its type); the NotServed releases were probed
// with `go mod download <module>@v<release>` against the Go module proxy.
func Modules() []Module {
	return []Module{
		{Kind: Receivers, Type: "otlp", Path: coreModules + "receiver/otlpreceiver"},
		{Kind: Receivers, Type: "filelog", Path: contribModules + "receiver/filelogreceiver"},
		{Kind: Receivers, Type: "hostmetrics", Path: contribModules + "receiver/hostmetricsreceiver"},
		{Kind: Receivers, Type: "k8s_cluster", Path: contribModules + "receiver/k8sclusterreceiver"},
		{Kind: Receivers, Type: "k8sobjects", Path: contribModules + "receiver/k8sobjectsreceiver"},
		{Kind: Receivers, Type: "kubeletstats", Path: contribModules + "receiver/kubeletstatsreceiver"},
		{Kind: Receivers, Type: "prometheus", Path: contribModules + "receiver/prometheusreceiver"},
		{Kind: Processors, Type: "batch", Path: coreModules + "processor/batchprocessor"},
		{Kind: Processors, Type: "memory_limiter", Path: coreModules + "processor/memorylimiterprocessor"},
		{Kind: Processors, Type: "resource", Path: contribModules + "processor/resourceprocessor"},
		{Kind: Exporters, Type: "debug", Path: coreModules + "exporter/debugexporter"},
		{Kind: Exporters, Type: "otlphttp", Path: coreModules + "exporter/otlphttpexporter"},
		{Kind: Exporters, Type: "awscloudwatchlogs", Path: contribModules + "exporter/awscloudwatchlogsexporter",
			NotServed: []string{"0.145.0"}},
		{Kind: Exporters, Type: "prometheusremotewrite", Path: contribModules + "exporter/prometheusremotewriteexporter"},
		{Kind: Extensions, Type: "basicauth", Path: contribModules + "extension/basicauthextension"},
		{Kind: Extensions, Type: "health_check", Path: contribModules + "extension/healthcheckextension"},
	}
}

// Resolve takes a Usage and returns the module of each component type it names, in Kinds() order and then by type.
// A type without a module is an error naming it and the fix; all such types are reported at once.
func Resolve(u Usage) ([]Module, error) {
	byID := map[string]Module{}
	for _, m := range Modules() {
		byID[m.ID()] = m
	}
	var out []Module
	var missing []string
	for _, k := range Kinds() {
		for _, t := range u[k] {
			m, ok := byID[string(k)+"/"+t]
			if !ok {
				missing = append(missing, string(k)+"/"+t)
				continue
			}
			out = append(out, m)
		}
	}
	if len(missing) > 0 {
		return nil, fmt.Errorf("component types %v are used by a collector config but have no Go module in "+
			"chartlib/collector Modules; add a row naming the module that provides each", missing)
	}
	return out, nil
}
