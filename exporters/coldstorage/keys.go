package coldstorage

import (
	"strings"

	"kof.dev/kof/exporters/bucket"
	"kof.dev/kof/exporters/columnar"
	"kof.dev/kof/exporters/window"
)

// Object names inside a window folder.
const (
	// SuccessName is the marker written after the Parquet file; its presence marks the window exported.
	SuccessName = "_SUCCESS"
	// DefaultTenant is the tenant partition of data that carries no tenant.
	DefaultTenant = "default"
	// UnknownCluster is the cluster partition of data that carries no cluster name.
	UnknownCluster = "unknown"
)

// Folder returns the window folder of one source for one tenant and cluster:
// `<prefix>/tenant=<t>/cluster=<c>/dt=YYYY-MM-DD/hour=HH/<source>/` (Hive partitions; values escaped by
// bucket.EscapeSegment).
func Folder(prefix, tenant, cluster string, h window.Hour, source Source) string {
	var b strings.Builder
	if prefix != "" {
		b.WriteString(strings.Trim(prefix, "/"))
		b.WriteByte('/')
	}
	b.WriteString("tenant=" + bucket.EscapeSegment(tenant))
	b.WriteString("/cluster=" + bucket.EscapeSegment(cluster))
	b.WriteString("/dt=" + h.Date())
	b.WriteString("/hour=" + h.HourOfDay())
	b.WriteString("/" + string(source) + "/")
	return b.String()
}

// The data files of a folder: metrics (layout 2) are a samples and a series file, logs and traces one file each.
const (
	SamplesName = "samples.parquet"
	SeriesName  = "series.parquet"
	LogsName    = "logs.parquet"
	TracesName  = "traces.parquet"
)

// dataFile is one data file of a folder's layout: its name, the table its footer names and its columns.
type dataFile struct {
	name, table string
	columns     []string
}

// Layout returns the layout version of source's folders (written into `_SUCCESS` as `layout`) and the names of
// its data files, in the order a run completes them (samples before series, so that a folder never holds a series
// file without the samples it describes).
func Layout(source Source) (int, []string) {
	v, files := layoutOf(source)
	names := make([]string, len(files))
	for i, f := range files {
		names[i] = f.name
	}
	return v, names
}

func layoutOf(source Source) (int, []dataFile) {
	switch source {
	case Metrics:
		return columnar.MetricsLayout, []dataFile{
			{SamplesName, "samples", columnar.Columns[columnar.SampleRow]()},
			{SeriesName, "series", columnar.Columns[columnar.SeriesRow]()},
		}
	case Logs:
		return 1, []dataFile{{LogsName, "logs", columnar.Columns[columnar.LogRow]()}}
	default:
		return 1, []dataFile{{TracesName, "spans", columnar.Columns[columnar.SpanRow]()}}
	}
}
