package coldstorage

import (
	"errors"
	"fmt"
	"net/url"
	"strconv"
	"strings"
	"time"

	"kof.dev/kof/exporters/bucket"
	"kof.dev/kof/exporters/columnar"
	"kof.dev/kof/exporters/window"
)

// Source is one kind of telemetry the exporter reads.
type Source string

// The sources, in export order.
const (
	Metrics Source = "metrics"
	Logs    Source = "logs"
	Traces  Source = "traces"
)

// Selection names the fields that carry the tenant and the cluster of a source's data.
type Selection struct {
	// Tenant is the label (metrics) or field (logs, traces) holding the tenant, as KOF's VMUser routes add it
	// (docs/contract.md "VMUser routes").
	Tenant string
	// Cluster is the label or field holding the cluster name, as KOF's collectors add it.
	Cluster string
}

// Config is the exporter's whole configuration, read once at start (FromEnv) and validated.
type Config struct {
	// Sources to export, in order.
	Sources []Source
	// MetricsURL, LogsURL, TracesURL are the read API roots of VictoriaMetrics (Prometheus API root), VictoriaLogs
	// and VictoriaTraces.
	MetricsURL, LogsURL, TracesURL string
	// Selection of each source.
	Selection map[Source]Selection
	// S3 is the target bucket.
	S3 bucket.Config
	// Prefix is the first folder of every key (`telemetry`).
	Prefix string
	// Plan says which windows a run exports.
	Plan window.Plan
	// RowGroupRows bounds the Parquet row groups.
	RowGroupRows int64
	// ScratchDir is a writable folder where each upload holds its part (up to bucket.PartSize) in a file instead of
	// memory; "" holds parts in memory.
	ScratchDir string
}

// Env names of the exporter (set by charts/cold-storage-exporter).
const (
	EnvSources            = "SOURCES"
	EnvMetricsURL         = "METRICS_URL"
	EnvLogsURL            = "LOGS_URL"
	EnvTracesURL          = "TRACES_URL"
	EnvS3Bucket           = bucket.EnvBucket
	EnvS3Region           = bucket.EnvRegion
	EnvS3Endpoint         = bucket.EnvEndpoint
	EnvS3UsePathStyle     = bucket.EnvUsePathStyle
	EnvS3InsecureSkip     = bucket.EnvInsecureSkipVerify
	EnvS3AccessKey        = bucket.EnvAccessKey
	EnvS3SecretKey        = bucket.EnvSecretKey
	EnvS3Prefix           = "S3_PREFIX"
	EnvWindowDelay        = window.EnvDelay
	EnvCatchUpHours       = window.EnvCatchUpHours
	EnvRowGroupRows       = "ROW_GROUP_ROWS"
	EnvScratchDir         = "SCRATCH_DIR"
	EnvMetricsTenantLabel = "METRICS_TENANT_LABEL"
	EnvMetricsCluster     = "METRICS_CLUSTER_LABEL"
	EnvLogsTenantField    = "LOGS_TENANT_FIELD"
	EnvLogsClusterField   = "LOGS_CLUSTER_FIELD"
	EnvTracesTenantField  = "TRACES_TENANT_FIELD"
	EnvTracesClusterField = "TRACES_CLUSTER_FIELD"
)

// Defaults applied by FromEnv for unset variables.
const (
	DefaultPrefix       = "telemetry"
	DefaultWindowDelay  = 10 * time.Minute
	DefaultCatchUpHours = 24
)

// DefaultSelection returns the tenant and cluster fields of KOF's own data: the `tenant` label/field of the VMUser
// routes (`resource_attr:tenant` for traces), the `cluster` label KOF's collectors add to every metric
// (charts/kof-collectors, prometheusremotewrite external labels) and their `k8s.cluster.name` resource attribute.
func DefaultSelection() map[Source]Selection {
	return map[Source]Selection{
		Metrics: {Tenant: "tenant", Cluster: "cluster"},
		Logs:    {Tenant: "tenant", Cluster: "k8s.cluster.name"},
		Traces:  {Tenant: "resource_attr:tenant", Cluster: "resource_attr:k8s.cluster.name"},
	}
}

// FromEnv reads the configuration from getenv (os.Getenv in main). It returns every problem at once, each naming
// the variable and the fix.
func FromEnv(getenv func(string) string) (Config, error) {
	c := Config{
		MetricsURL: getenv(EnvMetricsURL), LogsURL: getenv(EnvLogsURL), TracesURL: getenv(EnvTracesURL),
		Selection: DefaultSelection(), Prefix: DefaultPrefix,
		RowGroupRows: columnar.DefaultRowGroupRows, ScratchDir: getenv(EnvScratchDir),
	}
	s3, err := bucket.FromEnv(getenv)
	plan, perr := window.PlanFromEnv(getenv, window.Plan{Delay: DefaultWindowDelay, CatchUp: DefaultCatchUpHours})
	c.S3, c.Plan = s3, plan
	errs := []error{err, perr}
	if v, ok := lookup(getenv, EnvS3Prefix); ok {
		c.Prefix = strings.Trim(v, "/")
	}
	sources := getenv(EnvSources)
	if sources == "" {
		sources = "metrics,logs,traces"
	}
	seen := map[Source]bool{}
	for _, s := range strings.Split(sources, ",") {
		src := Source(strings.TrimSpace(s))
		switch src {
		case Metrics, Logs, Traces:
			if !seen[src] {
				c.Sources = append(c.Sources, src)
			}
			seen[src] = true
		default:
			errs = append(errs, fmt.Errorf("%s: unknown source %q; use a comma-separated list of metrics, logs, traces", EnvSources, s))
		}
	}
	if v, ok := lookup(getenv, EnvRowGroupRows); ok {
		n, err := strconv.ParseInt(v, 10, 64)
		if err != nil || n < 1 {
			errs = append(errs, fmt.Errorf("%s %q: want a positive number of rows", EnvRowGroupRows, v))
		}
		c.RowGroupRows = n
	}
	for src, names := range map[Source][2]string{
		Metrics: {EnvMetricsTenantLabel, EnvMetricsCluster},
		Logs:    {EnvLogsTenantField, EnvLogsClusterField},
		Traces:  {EnvTracesTenantField, EnvTracesClusterField},
	} {
		sel := c.Selection[src]
		if v, ok := lookup(getenv, names[0]); ok {
			sel.Tenant = v
		}
		if v, ok := lookup(getenv, names[1]); ok {
			sel.Cluster = v
		}
		c.Selection[src] = sel
	}
	if err := c.Validate(); err != nil {
		errs = append(errs, err)
	}
	return c, errors.Join(errs...)
}

// Validate checks the URLs of the chosen sources, the bucket and the plan; it returns every problem at once.
func (c Config) Validate() error {
	var errs []error
	for _, s := range c.Sources {
		u := c.SourceURL(s)
		env := map[Source]string{Metrics: EnvMetricsURL, Logs: EnvLogsURL, Traces: EnvTracesURL}[s]
		if p, err := url.Parse(u); u == "" || err != nil || (p.Scheme != "http" && p.Scheme != "https") || p.Host == "" {
			errs = append(errs, fmt.Errorf("%s %q: source %s needs an http(s) URL of its read API", env, u, s))
		}
		if sel := c.Selection[s]; sel.Tenant == "" || sel.Cluster == "" {
			errs = append(errs, fmt.Errorf("source %s: tenant and cluster field names must not be empty", s))
		}
	}
	if len(c.Sources) == 0 {
		errs = append(errs, fmt.Errorf("%s: no source; use a comma-separated list of metrics, logs, traces", EnvSources))
	}
	errs = append(errs, c.S3.Validate(), c.Plan.Validate())
	return errors.Join(errs...)
}

// SourceURL returns the read URL of source s.
func (c Config) SourceURL(s Source) string {
	return map[Source]string{Metrics: c.MetricsURL, Logs: c.LogsURL, Traces: c.TracesURL}[s]
}

func lookup(getenv func(string) string, name string) (string, bool) {
	v := getenv(name)
	return v, v != ""
}
