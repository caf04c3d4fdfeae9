package dashboards

import (
	"context"
	"fmt"
	"kof.dev/kof/internal/testproc"
	"net/http"
	"os"
	"path/filepath"
	"sort"
	"strings"
	"testing"
	"time"

	"kof.dev/kof/chartlib/dashboards"
	"kof.dev/kof/chartlib/promql"
)

const rulesFile = "charts/kof-mothership/files/default-rules.yaml"

// window is what Grafana's $__rate_interval becomes: four 1-second scrape intervals and then some.
const window = "1m"

// fleet is the real programs the test runs and the addresses they serve.
type fleet struct {
	vm, vl, vmauth, nodeExporter, otelTelemetry, otlp string
	logFile                                           string
}

// TestLiveQueries: real servers scrape real exporters with KOF's cluster label, synthetic series fill the rest; then
// every KOF dashboard query and every KOF rule runs through VictoriaMetrics' Prometheus API without error, every
// panel query returns data, the alerts that the planted situations call for fire, and every live component serves each
// of its catalogued metric names.
func TestLiveQueries(t *testing.T) {
	f := startFleet(t)
	ctx, cancel := context.WithTimeout(context.Background(), 90*time.Second)
	defer cancel()
	plantSituations(t, ctx, f)

	cat, err := promql.DefaultCatalog()
	if err != nil {
		t.Fatal(err)
	}
	// Every name of every live component is served (scraped for real), so the catalog cannot drift from the programs.
	var live []string
	for _, c := range cat.Components {
		if c.Live {
			live = append(live, c.Metrics...)
		}
	}
	eventually(t, 60*time.Second, "every live component's catalogued metrics are stored", func(ctx context.Context) (bool, string) {
		var missing []string
		for _, m := range live {
			res, err := query(ctx, f.vm, fmt.Sprintf(`count(%s{cluster=~"regional-a|child-a"})`, m))
			if err != nil || len(res) == 0 {
				missing = append(missing, m)
			}
		}
		return len(missing) == 0, "missing: " + strings.Join(missing, ", ")
	})
	// Rates need two scrapes of every counter after the planted events.
	eventually(t, 30*time.Second, "collector telemetry and storage counters have rates", func(ctx context.Context) (bool, string) {
		if err := poke(ctx, f); err != nil {
			return false, err.Error()
		}
		for _, q := range []string{
			`sum(rate(otelcol_exporter_sent_log_records_total[1m])) > 0`,
			`sum(rate(otelcol_exporter_sent_spans_total[1m])) > 0`,
			`sum(rate(otelcol_exporter_send_failed_metric_points_total[1m])) > 0`,
			`sum(rate(vl_rows_ingested_total{cluster="regional-a"}[1m])) > 0`,
			`sum(rate(vmauth_http_request_errors_total{reason="invalid_auth_token"}[1m])) > 0`,
			`sum(rate(vm_rows_ignored_total[5m])) > 0`,
		} {
			if res, err := query(ctx, f.vm, q); err != nil || len(res) == 0 {
				return false, q
			}
		}
		return true, ""
	})

	boards, err := dashboards.All()
	if err != nil {
		t.Fatal(err)
	}
	panels := 0
	for _, b := range boards {
		for _, e := range dashboards.Exprs(b, window, map[string]string{dashboards.ClusterVariable: ".*"}) {
			panels++
			res, err := query(ctx, f.vm, e.Query)
			switch {
			case err != nil:
				t.Errorf("%s: %v\n  %s", e.Where, err, e.Query)
			case len(res) == 0:
				t.Errorf("%s: no data\n  %s", e.Where, e.Query)
			}
		}
	}
	t.Logf("%d dashboard queries ran, each returned data", panels)
	// The same dashboards on a regional cluster's Grafana (kof-storage grafana.enabled), through its data source.
	regionalCtx, cancelRegional := context.WithTimeout(context.Background(), 60*time.Second)
	defer cancelRegional()
	checkRegionalGrafana(t, regionalCtx, f, boards)

	rules := readRules(t)
	byName := map[string]promql.Rule{}
	for _, r := range rules {
		byName[r.Name()] = r
		if _, err := query(ctx, f.vm, r.Expr); err != nil {
			t.Errorf("rule %s/%s: %v\n  %s", r.Group, r.Name(), err, r.Expr)
		}
	}
	t.Logf("%d rules ran", len(rules))

	// The planted situations: each alert returns exactly the series it must, and the healthy ones nothing.
	fires := map[string][]string{
		"KOFClusterNoData":             {"child-silent"},
		"KOFStorageRowsRejected":       {"regional-a"},
		"KOFCollectorExportFailing":    {"regional-a prometheusremotewrite/unreachable"},
		"KOFStorageUnauthorizedWrites": {"regional-a"},
		"KOFAuditExportWindowMissed":   {"regional-a kof-audit-logs-exporter"},
		"KOFExporterJobFailed":         {"regional-a kof-audit-logs-exporter-29400000"},
		"KOFOperatorReconcileErrors":   {"clusterdeployment", "promxyservergroup"},
		"KOFColdExportWindowMissed":    nil,
		"KOFStorageDiskFull":           nil,
		"KOFStorageIngestionStopped":   nil,
	}
	for name, want := range fires {
		r, ok := byName[name]
		if !ok {
			t.Errorf("rule %s is missing from %s", name, rulesFile)
			continue
		}
		res, err := query(ctx, f.vm, r.Expr)
		if err != nil {
			t.Errorf("rule %s: %v", name, err)
			continue
		}
		var got []string
		for _, s := range res {
			got = append(got, strings.TrimSpace(strings.Join(nonEmpty(s.Metric["cluster"], s.Metric["exporter"], s.Metric["cronjob"], s.Metric["job_name"], s.Metric["controller"]), " ")))
		}
		sort.Strings(got)
		if strings.Join(got, ",") != strings.Join(want, ",") {
			t.Errorf("rule %s returns %v, want %v", name, got, want)
		}
	}

	// Regression: the disk rule divided vm_free_disk_space_bytes by a sum with vm_data_size_bytes without aggregating
	// their different labels (path vs type), which matches no series; the aggregated form has a ratio per instance.
	if res, err := query(ctx, f.vm, `min by (cluster, instance) (vm_free_disk_space_bytes / (vm_free_disk_space_bytes + vm_data_size_bytes))`); err != nil || len(res) != 0 {
		t.Errorf("the former disk expression returns %d series (err %v); the regression check assumes it matches none", len(res), err)
	}
	disk := strings.Replace(byName["KOFStorageDiskFull"].Expr, "< 0.1", ">= 0", 1)
	if res, err := query(ctx, f.vm, disk); err != nil || len(res) == 0 {
		t.Errorf("KOFStorageDiskFull without its threshold returns %d series (err %v), want the free-disk ratio of regional-a", len(res), err)
	}
}

func nonEmpty(s ...string) []string {
	var out []string
	for _, x := range s {
		if x != "" {
			out = append(out, x)
		}
	}
	return out
}

func readRules(t *testing.T) []promql.Rule {
	t.Helper()
	data, err := os.ReadFile(filepath.Join("..", "..", rulesFile))
	if err != nil {
		t.Fatal(err)
	}
	rules, err := promql.ParseRules(data)
	if err != nil {
		t.Fatal(err)
	}
	return rules
}

// startFleet starts VictoriaMetrics (scraping node_exporter, itself, vmauth and the collector's telemetry),
// VictoriaLogs, vmauth, node_exporter and the collector.
func startFleet(t *testing.T) fleet {
	t.Helper()
	dir := t.TempDir()
	f := fleet{vm: testproc.FreeAddr(t), vl: testproc.FreeAddr(t), vmauth: testproc.FreeAddr(t), nodeExporter: testproc.FreeAddr(t), otelTelemetry: testproc.FreeAddr(t), otlp: testproc.FreeAddr(t)}
	scrape := fmt.Sprintf(`global:
  scrape_interval: 1s
scrape_configs:
  - job_name: node-exporter
    static_configs:
      - targets: [%[1]q]
        labels: {cluster: regional-a}
      - targets: [%[1]q]
        labels: {cluster: child-a}
  - job_name: vmsingle
    static_configs:
      - targets: [%[2]q]
        labels: {cluster: regional-a}
  - job_name: vmauth
    static_configs:
      - targets: [%[3]q]
        labels: {cluster: regional-a}
  - job_name: otel-collector
    static_configs:
      - targets: [%[4]q]
        labels: {cluster: regional-a}
`, f.nodeExporter, f.vm, f.vmauth, f.otelTelemetry)
	write(t, filepath.Join(dir, "scrape.yaml"), scrape)
	vm := testproc.Start(t, "victoria-metrics", testproc.Tool(t, "victoria-metrics"), nil, "-httpListenAddr="+f.vm,
		"-storageDataPath="+filepath.Join(dir, "vm"), "-retentionPeriod=1d", "-search.latencyOffset=0s",
		"-promscrape.config="+filepath.Join(dir, "scrape.yaml"))
	vl := testproc.Start(t, "victoria-logs", testproc.Tool(t, "victoria-logs"), nil, "-httpListenAddr="+f.vl, "-storageDataPath="+filepath.Join(dir, "vl"))
	ne := testproc.Start(t, "node-exporter", testproc.Tool(t, "node-exporter"), nil, "--web.listen-address="+f.nodeExporter,
		"--collector.disable-defaults", "--collector.cpu", "--collector.meminfo", "--collector.filesystem",
		"--collector.netdev", "--collector.loadavg")
	write(t, filepath.Join(dir, "auth.yaml"), fmt.Sprintf("users:\n  - username: child-a\n    password: child-a-password\n    url_prefix: http://%s/\n", f.vm))
	va := testproc.Start(t, "vmauth", testproc.Tool(t, "vmauth"), nil, "-httpListenAddr="+f.vmauth, "-auth.config="+filepath.Join(dir, "auth.yaml"))
	vm.WaitHTTP(t, "http://"+f.vm+"/health")
	vl.WaitHTTP(t, "http://"+f.vl+"/health")
	ne.WaitHTTP(t, "http://"+f.nodeExporter+"/metrics")
	va.WaitHTTP(t, "http://"+f.vmauth+"/health")

	f.logFile = filepath.Join(dir, "app.log")
	logFile := f.logFile
	write(t, logFile, "first line of the application log\n")
	th, tp := hostPort(t, f.otelTelemetry)
	collector := fmt.Sprintf(`receivers:
  prometheus:
    config:
      scrape_configs:
        - job_name: victoria-logs
          scrape_interval: 1s
          static_configs:
            - targets: [%[1]q]
  filelog:
    include: [%[2]q]
    start_at: beginning
  otlp:
    protocols:
      http:
        endpoint: %[3]q
exporters:
  prometheusremotewrite:
    endpoint: http://%[4]s/api/v1/write
    external_labels:
      cluster: regional-a
  prometheusremotewrite/unreachable:
    endpoint: http://%[5]s/api/v1/write
    retry_on_failure:
      enabled: false
  otlphttp/logs:
    logs_endpoint: http://%[1]s/insert/opentelemetry/v1/logs
  debug: {}
service:
  pipelines:
    metrics:
      receivers: [prometheus]
      exporters: [prometheusremotewrite, prometheusremotewrite/unreachable]
    logs:
      receivers: [filelog]
      exporters: [otlphttp/logs]
    traces:
      receivers: [otlp]
      exporters: [debug]
  telemetry:
    metrics:
      level: detailed
      readers:
        - pull:
            exporter:
              prometheus:
                host: %[6]q
                port: %[7]s
`, f.vl, logFile, f.otlp, f.vm, testproc.FreeAddr(t), th, tp)
	write(t, filepath.Join(dir, "collector.yaml"), collector)
	oc := testproc.Start(t, "otelcol", testproc.Tool(t, "otelcol"), nil, "--config=file:"+filepath.Join(dir, "collector.yaml"))
	oc.WaitHTTP(t, "http://"+f.otelTelemetry+"/metrics")
	return f
}

// plantSituations imports the synthetic series and causes, for real, what the alerts watch: a rejected row, an
// unauthorized request, log lines and a span through the collector.
func plantSituations(t *testing.T, ctx context.Context, f fleet) {
	t.Helper()
	now := time.Now()
	body := exposition(synthetic(now), now.Add(-time.Hour), now)
	up, from, to := silentUp(now)
	body += exposition([]sample{up}, from, to)
	if code, msg, err := request(ctx, http.MethodPost, "http://"+f.vm+"/api/v1/import/prometheus", "text/plain", []byte(body), "", ""); err != nil || code/100 != 2 {
		t.Fatalf("import synthetic series: %d %s %v", code, msg, err)
	}
	if err := poke(ctx, f); err != nil {
		t.Fatal(err)
	}
}

// poke causes, for real, what the storage, vmauth and collector panels and alerts watch, once more each call (so
// their counters rise between scrapes): a row older than the retention period, which VictoriaMetrics ignores
// (vm_rows_ignored_total{reason="small_timestamp"}); an authorized and an unauthorized request through vmauth; a
// line of the application log the collector ships to VictoriaLogs; a span to the collector.
func poke(ctx context.Context, f fleet) error {
	now := time.Now()
	ancient := fmt.Sprintf("kof_test_ancient_row{cluster=\"regional-a\"} 1 %d\n", now.Add(-48*time.Hour).UnixMilli())
	if code, msg, err := request(ctx, http.MethodPost, "http://"+f.vm+"/api/v1/import/prometheus", "text/plain", []byte(ancient), "", ""); err != nil || code/100 != 2 {
		return fmt.Errorf("import an ancient row: %d %s %v", code, msg, err)
	}
	if code, _, err := request(ctx, http.MethodGet, "http://"+f.vmauth+"/api/v1/query?query=up", "", nil, "child-a", "child-a-password"); err != nil || code != 200 {
		return fmt.Errorf("authorized vmauth request: %d %v", code, err)
	}
	if code, _, err := request(ctx, http.MethodGet, "http://"+f.vmauth+"/api/v1/query?query=up", "", nil, "child-a", "wrong"); err != nil || code != 401 {
		return fmt.Errorf("unauthorized vmauth request: %d %v, want 401", code, err)
	}
	lf, err := os.OpenFile(f.logFile, os.O_APPEND|os.O_WRONLY, 0)
	if err != nil {
		return err
	}
	_, err = fmt.Fprintf(lf, "%s GET / 200\n", now.UTC().Format(time.RFC3339Nano))
	if cerr := lf.Close(); err == nil {
		err = cerr
	}
	if err != nil {
		return fmt.Errorf("append to the application log: %w", err)
	}
	span := `{"resourceSpans":[{"resource":{"attributes":[{"key":"service.name","value":{"stringValue":"web"}}]},` +
		`"scopeSpans":[{"spans":[{"traceId":"5b8aa5a2d2c872e8321cf37308d69df2","spanId":"051581bf3cb55c13","name":"GET /",` +
		fmt.Sprintf(`"kind":2,"startTimeUnixNano":"%d","endTimeUnixNano":"%d"}]}]}]}`, now.UnixNano(), now.Add(time.Millisecond).UnixNano())
	if code, msg, err := request(ctx, http.MethodPost, "http://"+f.otlp+"/v1/traces", "application/json", []byte(span), "", ""); err != nil || code != 200 {
		return fmt.Errorf("send a span to the collector: %d %s %v", code, msg, err)
	}
	return nil
}

func write(t *testing.T, path, content string) {
	t.Helper()
	if err := os.WriteFile(path, []byte(content), 0o600); err != nil {
		t.Fatal(err)
	}
}
