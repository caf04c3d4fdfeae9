package coldstorage

import (
	"strings"

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
// PartitionValue).
func Folder(prefix, tenant, cluster string, h window.Hour, source Source) string {
	var b strings.Builder
	if prefix != "" {
		b.WriteString(strings.Trim(prefix, "/"))
		b.WriteByte('/')
	}
	b.WriteString("tenant=" + PartitionValue(tenant))
	b.WriteString("/cluster=" + PartitionValue(cluster))
	b.WriteString("/dt=" + h.Date())
	b.WriteString("/hour=" + h.HourOfDay())
	b.WriteString("/" + string(source) + "/")
	return b.String()
}

// DataName returns the Parquet file name of source: `<source>.parquet`.
func DataName(source Source) string { return string(source) + ".parquet" }

// PartitionValue escapes v for a Hive partition path: letters, digits and `-_.` stay, every other byte becomes
// `%XX` (as Hive escapes partition values), so a value can never add a folder level.
func PartitionValue(v string) string {
	const hex = "0123456789ABCDEF"
	var b strings.Builder
	for i := 0; i < len(v); i++ {
		c := v[i]
		if c >= 'a' && c <= 'z' || c >= 'A' && c <= 'Z' || c >= '0' && c <= '9' || c == '-' || c == '_' || c == '.' {
			b.WriteByte(c)
			continue
		}
		b.WriteByte('%')
		b.WriteByte(hex[c>>4])
		b.WriteByte(hex[c&15])
	}
	return b.String()
}
