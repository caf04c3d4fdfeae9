package datapath

import (
	"context"
	"errors"
	"fmt"
	"net"
	"net/url"
	"os"
	"path/filepath"
	"strconv"
	"strings"
	"testing"
	"time"

	"k8s.io/apimachinery/pkg/apis/meta/v1/unstructured"
	"sigs.k8s.io/yaml"

	"kof.dev/kof/chartlib/collector"
	"kof.dev/kof/chartlib/fleet"
	"kof.dev/kof/internal/testproc"
)

// podLog is the log file of an application container on the scratch node (the path layout the container parser of
// the rendered filelog receiver reads namespace, pod, uid and container from).
const podLog = "/var/log/pods/kof_app-0_0a1b2c3d-0000-4000-8000-000000000001/app/0.log"

// run is a collector running a rendered config.
type run struct {
	p         *testproc.Process
	telemetry string
	podLog    string
	auditLog  string
}

// runCollector runs the node collector that `kof render` gives cluster, as the pod would run it: its environment
// (Secrets resolved from the render, env overriding), its mounts under a scratch node folder and only the receivers
// that need a kubelet or a node swapped for local ones (localReceivers). It reaches the cluster's hosts through
// netw. The exporter hosts of the config are routed to vmauthAddr.
func runCollector(t *testing.T, r *rendered, cluster string, netw *network, vmauthAddr string, env map[string]string) *run {
	t.Helper()
	obj, cfg, svc := r.nodeCollector(t, cluster)
	podEnv := resolveEnv(t, r, obj, svc, cfg.Env)
	for k, v := range env {
		podEnv[k] = v
	}
	root := filepath.Join(t.TempDir(), "node")
	body, err := collector.OnNode(cfg.Body, cfg.Mounts, podEnv, root)
	if err != nil {
		t.Fatal(err)
	}
	run := &run{telemetry: testproc.FreeAddr(t), podLog: root + podLog}
	localReceivers(t, body, run.telemetry)
	run.auditLog = firstInclude(t, body, "filelog/audit")
	for _, f := range []string{run.podLog, run.auditLog} {
		if err := os.MkdirAll(filepath.Dir(f), 0o755); err != nil {
			t.Fatal(err)
		}
		// A first line, already there when the collector starts: the receivers watch only files with content, and
		// start at their end.
		if err := os.WriteFile(f, []byte(time.Now().UTC().Format(time.RFC3339Nano)+" stdout F file opened\n"), 0o644); err != nil {
			t.Fatal(err)
		}
	}
	for _, host := range exporterHosts(t, body) {
		netw.route(host, backend{addr: vmauthAddr})
	}
	data, err := yaml.Marshal(body)
	if err != nil {
		t.Fatal(err)
	}
	file := filepath.Join(t.TempDir(), "config.yaml")
	if err := os.WriteFile(file, data, 0o600); err != nil {
		t.Fatal(err)
	}
	podEnv["HTTP_PROXY"], podEnv["HTTPS_PROXY"], podEnv["SSL_CERT_FILE"] = netw.URL(), netw.URL(), netw.caFile
	var list []string
	for k, v := range podEnv {
		list = append(list, k+"="+v)
	}
	run.p = testproc.Start(t, "otelcol-"+cluster, testproc.Tool(t, "otelcol"), list, "--config=file:"+file)
	eventually(t, 30*time.Second, "the collector serves its own metrics", func(ctx context.Context) (bool, string) {
		_, code, err := get(ctx, "http://"+run.telemetry+"/metrics")
		return err == nil && code == 200, fmt.Sprintf("code %d, err %v", code, err)
	})
	// The file log receivers start at the end of each file (start_at: end, as rendered): a line is read only once
	// the receiver watches the file, which it reports in its log.
	eventually(t, 30*time.Second, "the file log receivers watch their files", func(context.Context) (bool, string) {
		data, err := os.ReadFile(run.p.Log)
		n := strings.Count(string(data), "Started watching file")
		return err == nil && n >= 2, fmt.Sprintf("%d files watched, err %v", n, err)
	})
	return run
}

// resolveEnv returns the pod environment with each Secret reference replaced by the Secret's value in the render.
func resolveEnv(t *testing.T, r *rendered, obj *unstructured.Unstructured, svc *fleet.Service, env map[string]string) map[string]string {
	t.Helper()
	out := map[string]string{}
	for k, v := range env {
		out[k] = v
	}
	list, _, _ := unstructured.NestedSlice(obj.Object, "spec", "env")
	for _, e := range list {
		m := e.(map[string]any)
		name, _ := m["name"].(string)
		sec, ok, _ := unstructured.NestedString(m, "valueFrom", "secretKeyRef", "name")
		if !ok {
			continue
		}
		key, _, _ := unstructured.NestedString(m, "valueFrom", "secretKeyRef", "key")
		out[name] = r.secret(t, svc, sec, key)
	}
	return out
}

// localReceivers swaps, in body, the receivers that need a kubelet or a node for local ones and rewires only the
// pipelines' receiver lists: kubeletstats and every prometheus scrape (control plane, KCM targets) give way to a
// scrape of the collector's own metrics (prometheus/self); hostmetrics reads this machine without the node's root
// path; otlp and the health check listen on loopback; the collector's own metrics are served at telemetry. Exporters,
// extensions' auth, processors and pipelines stay as rendered.
func localReceivers(t *testing.T, body map[string]any, telemetry string) {
	t.Helper()
	recv, _ := body["receivers"].(map[string]any)
	dropped := map[string]bool{}
	for id := range recv {
		switch collector.TypeOf(id) {
		case "kubeletstats", "prometheus", "k8s_cluster", "k8sobjects":
			dropped[id] = true
			delete(recv, id)
		case "hostmetrics":
			recv[id] = map[string]any{"collection_interval": "2s",
				"scrapers": map[string]any{"cpu": map[string]any{}, "memory": map[string]any{}, "load": map[string]any{}}}
		case "otlp":
			recv[id] = map[string]any{"protocols": map[string]any{
				"grpc": map[string]any{"endpoint": testproc.FreeAddr(t)}, "http": map[string]any{"endpoint": testproc.FreeAddr(t)}}}
		}
	}
	recv["prometheus/self"] = map[string]any{"config": map[string]any{"scrape_configs": []any{map[string]any{
		"job_name": "otelcol", "scrape_interval": "2s",
		"static_configs": []any{map[string]any{"targets": []any{telemetry}}}}}}}
	service := body["service"].(map[string]any)
	for _, p := range service["pipelines"].(map[string]any) {
		pm := p.(map[string]any)
		var keep []any
		metrics := false
		for _, id := range pm["receivers"].([]any) {
			if collector.TypeOf(id.(string)) == "hostmetrics" {
				metrics = true
			}
			if !dropped[id.(string)] {
				keep = append(keep, id)
			}
		}
		if metrics {
			keep = append(keep, "prometheus/self")
		}
		pm["receivers"] = keep
	}
	if ext, ok := body["extensions"].(map[string]any); ok {
		if hc, ok := ext["health_check"].(map[string]any); ok {
			hc["endpoint"] = testproc.FreeAddr(t)
		}
	}
	host, port, _ := net.SplitHostPort(telemetry)
	p, _ := strconv.Atoi(port)
	service["telemetry"] = map[string]any{"metrics": map[string]any{"level": "normal", "readers": []any{
		map[string]any{"pull": map[string]any{"exporter": map[string]any{"prometheus": map[string]any{
			"host": host, "port": p}}}}}}}
}

// firstInclude returns the first include path of the filelog receiver id.
func firstInclude(t *testing.T, body map[string]any, id string) string {
	t.Helper()
	inc, _, _ := unstructured.NestedStringSlice(body, "receivers", id, "include")
	if len(inc) == 0 {
		t.Fatalf("receiver %s has no include path", id)
	}
	return inc[0]
}

// exporterHosts returns the `host:port` of every exporter endpoint of body (https without a port: 443, http: 80).
func exporterHosts(t *testing.T, body map[string]any) []string {
	t.Helper()
	var out []string
	exps, _ := body["exporters"].(map[string]any)
	for id, e := range exps {
		m, _ := e.(map[string]any)
		for _, k := range []string{"endpoint", "logs_endpoint", "traces_endpoint", "metrics_endpoint"} {
			raw, _ := m[k].(string)
			if raw == "" {
				continue
			}
			u, err := url.Parse(raw)
			if err != nil {
				t.Fatalf("exporter %s %s: %v", id, k, err)
			}
			host := u.Host
			if u.Port() == "" {
				host += map[string]string{"https": ":443", "http": ":80"}[u.Scheme]
			}
			out = append(out, host)
		}
	}
	return out
}

// appendLine appends one line to file.
func appendLine(t *testing.T, file, line string) {
	t.Helper()
	f, err := os.OpenFile(file, os.O_APPEND|os.O_WRONLY, 0o644)
	if err != nil {
		t.Fatal(err)
	}
	defer f.Close()
	if _, err := f.WriteString(line + "\n"); err != nil {
		t.Fatal(err)
	}
}

// writePodLog appends a container log line (CRI format) with msg.
func (r *run) writePodLog(t *testing.T, msg string) {
	appendLine(t, r.podLog, time.Now().UTC().Format(time.RFC3339Nano)+" stdout F "+msg)
}

// writeAudit appends an API server audit event whose auditID is id.
func (r *run) writeAudit(t *testing.T, id string) {
	appendLine(t, r.auditLog, fmt.Sprintf(`{"kind":"Event","apiVersion":"audit.k8s.io/v1","level":"Metadata",`+
		`"auditID":"%s","stage":"ResponseComplete","requestURI":"/api/v1/namespaces","verb":"list",`+
		`"user":{"username":"admin"},"responseStatus":{"code":200}}`, id))
}

// sendFailed returns the sum of the collector's otelcol_exporter_send_failed_* counters.
func (r *run) sendFailed(ctx context.Context) (float64, error) {
	body, _, err := get(ctx, "http://"+r.telemetry+"/metrics")
	if err != nil {
		return 0, err
	}
	sum := 0.0
	for _, line := range strings.Split(string(body), "\n") {
		if !strings.HasPrefix(line, "otelcol_exporter_send_failed_") {
			continue
		}
		fields := strings.Fields(line)
		v, err := strconv.ParseFloat(fields[len(fields)-1], 64)
		if err == nil {
			sum += v
		}
	}
	return sum, nil
}

// eventually waits for cond to hold (testproc.Eventually), failing the test with its last message after timeout.
func eventually(t *testing.T, timeout time.Duration, what string, cond func(ctx context.Context) (bool, string)) {
	t.Helper()
	testproc.Eventually(t, timeout, what, func(ctx context.Context) error {
		if ok, msg := cond(ctx); !ok {
			return errors.New(msg)
		}
		return nil
	})
}
