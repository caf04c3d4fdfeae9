package coldstorage

import (
	"strings"

	"kof.dev/kof/exporters/bucket"
	"kof.dev/kof/exporters/window"
)

// Object names inside a window folder.
const (
	// SuccessName is the marker written after the Parquet file; its presence marks the window exported.
	SuccessName = "_SUCCESS"
	// LockName is the lease object of the run exporting the window.
	LockName = "_LOCK"
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

// DataName returns the Parquet file name of source: `<source>.parquet`.
func DataName(source Source) string { return string(source) + ".parquet" }
