package coldstorage

import (
	"context"
	"fmt"
	"io"
	"regexp"
	"sort"
	"strconv"
	"strings"

	"kof.dev/kof/exporters/columnar"
	"kof.dev/kof/exporters/victoria"
	"kof.dev/kof/exporters/window"
)

// Partition is one (tenant, cluster) folder of a window: the partition names and the raw values that map to them
// (data without a tenant goes to DefaultTenant, without a cluster to UnknownCluster, together with data whose value
// is that name, so that nothing is skipped as "already exported").
type Partition struct {
	// Tenant and Cluster are the partition names.
	Tenant, Cluster string
	// TenantValues and ClusterValues are the stored values selected ("" = the field is missing).
	TenantValues, ClusterValues []string
}

// reader reads one source.
type reader interface {
	// partitions returns the partitions with data in h, sorted.
	partitions(ctx context.Context, h window.Hour) ([]Partition, error)
	// write streams every row of p in h as one Parquet file into out.
	write(ctx context.Context, p Partition, h window.Hour, out io.Writer, opts columnar.Options) (columnar.Summary, error)
}

// tenantName and clusterName map stored values to partition names.
func tenantName(v string) string {
	if v == "" {
		return DefaultTenant
	}
	return v
}

func clusterName(v string) string {
	if v == "" {
		return UnknownCluster
	}
	return v
}

// group builds the sorted partitions of raw (tenant value → cluster values).
func group(raw map[string][]string) []Partition {
	type key struct{ t, c string }
	byKey := map[key]*Partition{}
	for tv, cvs := range raw {
		for _, cv := range cvs {
			k := key{tenantName(tv), clusterName(cv)}
			p := byKey[k]
			if p == nil {
				p = &Partition{Tenant: k.t, Cluster: k.c}
				byKey[k] = p
			}
			p.TenantValues = addUnique(p.TenantValues, tv)
			p.ClusterValues = addUnique(p.ClusterValues, cv)
		}
	}
	out := make([]Partition, 0, len(byKey))
	for _, p := range byKey {
		sort.Strings(p.TenantValues)
		sort.Strings(p.ClusterValues)
		out = append(out, *p)
	}
	sort.Slice(out, func(i, j int) bool {
		if out[i].Tenant != out[j].Tenant {
			return out[i].Tenant < out[j].Tenant
		}
		return out[i].Cluster < out[j].Cluster
	})
	return out
}

func addUnique(list []string, v string) []string {
	for _, x := range list {
		if x == v {
			return list
		}
	}
	return append(list, v)
}

// metricsReader reads VictoriaMetrics.
type metricsReader struct {
	api victoria.Metrics
	sel Selection
}

// matcher returns the PromQL matcher selecting label in values exactly ("" = the label is missing).
func matcher(label string, values []string) string {
	if len(values) == 1 {
		return label + "=" + strconv.Quote(values[0])
	}
	alts := make([]string, len(values))
	for i, v := range values {
		alts[i] = regexp.QuoteMeta(v)
	}
	return label + "=~" + strconv.Quote("(?:"+strings.Join(alts, "|")+")")
}

func (m metricsReader) selector(matchers ...string) string {
	return "{" + strings.Join(append([]string{`__name__!=""`}, matchers...), ",") + "}"
}

func (m metricsReader) partitions(ctx context.Context, h window.Hour) ([]Partition, error) {
	tenants, err := m.values(ctx, m.sel.Tenant, h)
	if err != nil {
		return nil, err
	}
	raw := map[string][]string{}
	for _, t := range tenants {
		cs, err := m.values(ctx, m.sel.Cluster, h, matcher(m.sel.Tenant, []string{t}))
		if err != nil {
			return nil, err
		}
		raw[t] = cs
	}
	return group(raw), nil
}

// values returns the values of label among the series of matchers with samples in h, plus "" when some of them
// lack the label.
func (m metricsReader) values(ctx context.Context, label string, h window.Hour, matchers ...string) ([]string, error) {
	vals, err := m.api.LabelValues(ctx, label, m.selector(matchers...), h)
	if err != nil {
		return nil, err
	}
	missing, err := m.api.LabelValues(ctx, "__name__", m.selector(append(matchers, label+`=""`)...), h)
	if err != nil {
		return nil, err
	}
	if len(missing) > 0 {
		vals = append([]string{""}, vals...)
	}
	return vals, nil
}

func (m metricsReader) write(ctx context.Context, p Partition, h window.Hour, out io.Writer, opts columnar.Options) (columnar.Summary, error) {
	w, err := columnar.NewMetricWriter(out, opts)
	if err != nil {
		return columnar.Summary{}, err
	}
	sel := m.selector(matcher(m.sel.Tenant, p.TenantValues), matcher(m.sel.Cluster, p.ClusterValues))
	var labels [][2]string
	err = m.api.Export(ctx, sel, h, func(s *victoria.Series) error {
		labels = labels[:0]
		name := ""
		for _, l := range s.Labels {
			if l.Name == "__name__" {
				name = l.Value
				continue
			}
			labels = append(labels, [2]string{l.Name, l.Value})
		}
		if err := w.Series(name, labels); err != nil {
			return err
		}
		for i, ts := range s.Timestamps {
			if err := w.Sample(ts, s.Values[i]); err != nil {
				return err
			}
		}
		return nil
	})
	if err != nil {
		return columnar.Summary{}, err
	}
	return w.Close()
}

// logsReader reads VictoriaLogs or VictoriaTraces through LogsQL; spans selects the span schema.
type logsReader struct {
	api   victoria.Logs
	sel   Selection
	spans bool
}

// filter returns the LogsQL filter selecting field in values exactly ("" = the field is missing).
func filter(field string, values []string) string {
	if len(values) == 1 {
		return victoria.Exact(field, values[0])
	}
	parts := make([]string, len(values))
	for i, v := range values {
		parts[i] = victoria.Exact(field, v)
	}
	return "(" + strings.Join(parts, " or ") + ")"
}

func (l logsReader) partitions(ctx context.Context, h window.Hour) ([]Partition, error) {
	base := victoria.TimeFilter(h)
	tenants, err := l.values(ctx, base, l.sel.Tenant)
	if err != nil {
		return nil, err
	}
	raw := map[string][]string{}
	for _, t := range tenants {
		cs, err := l.values(ctx, base+" "+victoria.Exact(l.sel.Tenant, t), l.sel.Cluster)
		if err != nil {
			return nil, err
		}
		raw[t] = cs
	}
	return group(raw), nil
}

// values returns the values of field among the records of query, plus "" when some of them lack it.
func (l logsReader) values(ctx context.Context, query, field string) ([]string, error) {
	vals, err := l.api.FieldValues(ctx, query, field)
	if err != nil {
		return nil, err
	}
	missing, err := l.api.FieldValues(ctx, query+" "+victoria.Exact(field, ""), "_stream_id")
	if err != nil {
		return nil, err
	}
	if len(missing) > 0 {
		vals = addUnique(vals, "")
		sort.Strings(vals)
	}
	return vals, nil
}

func (l logsReader) query(p Partition, h window.Hour) string {
	return victoria.TimeFilter(h) + " " + filter(l.sel.Tenant, p.TenantValues) + " " + filter(l.sel.Cluster, p.ClusterValues)
}

func (l logsReader) write(ctx context.Context, p Partition, h window.Hour, out io.Writer, opts columnar.Options) (columnar.Summary, error) {
	if l.spans {
		w, err := columnar.New[columnar.SpanRow](out, opts)
		if err != nil {
			return columnar.Summary{}, err
		}
		err = l.api.Query(ctx, l.query(p, h), func(r *victoria.Record) error {
			row, err := SpanOf(r)
			if err != nil {
				return err
			}
			return w.Write(row)
		})
		if err != nil {
			return columnar.Summary{}, err
		}
		return w.Close()
	}
	w, err := columnar.New[columnar.LogRow](out, opts)
	if err != nil {
		return columnar.Summary{}, err
	}
	err = l.api.Query(ctx, l.query(p, h), func(r *victoria.Record) error {
		row, err := LogOf(r)
		if err != nil {
			return err
		}
		return w.Write(row)
	})
	if err != nil {
		return columnar.Summary{}, err
	}
	return w.Close()
}

// errField names a record field that could not be read.
func errField(field, value string, err error) error {
	return fmt.Errorf("record field %s %q: %w", field, value, err)
}
