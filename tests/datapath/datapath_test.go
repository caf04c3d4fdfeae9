package datapath

import (
	"context"
	"fmt"
	"net/url"
	"strings"
	"testing"
	"time"

	"kof.dev/kof/operator/config"
)

// deliveryTimeout is how long data may take from a collector to storage (docs/collector.md, "Data path test").
const deliveryTimeout = 60 * time.Second

// stack is one regional storage behind vmauth, with a scenario's render.
type stack struct {
	r      *rendered
	st     storage
	netw   *network
	vmauth *vmauthServer
}

// newStack renders scenario, starts the storage, the stand-in network and vmauth configured with the bundles'
// VMUsers.
func newStack(t *testing.T, scenario string, bundles func(r *rendered) []bundleRef) *stack {
	t.Helper()
	s := &stack{r: renderScenario(t, scenario), st: startStorage(t), netw: startNetwork(t)}
	routeStorage(t, s.netw, s.r.storage, s.st)
	s.vmauth = startVMAuth(t, s.r.vmauthConfig(t, bundles(s.r)...), s.netw.URL())
	return s
}

// routeStorage routes the storage URLs the VMUsers point at to the local programs.
func routeStorage(t *testing.T, n *network, u config.StorageURLs, st storage) {
	t.Helper()
	for raw, b := range map[string]backend{
		u.VMInsert: {addr: st.metrics, clusterPaths: true}, u.VMSelect: {addr: st.metrics, clusterPaths: true},
		u.VLInsert: {addr: st.logs}, u.VLSelect: {addr: st.logs},
		u.VLAuditInsert: {addr: st.audit}, u.VLAuditSelect: {addr: st.audit},
	} {
		p, err := url.Parse(raw)
		if err != nil {
			t.Fatalf("storage URL %q: %v", raw, err)
		}
		host := p.Host
		if p.Port() == "" {
			host += ":80"
		}
		n.route(host, b)
	}
}

// marker returns a word unique to this moment, to find one record in storage.
func marker(kind string) string { return fmt.Sprintf("kof%s%x", kind, time.Now().UnixNano()) }

// wantMetrics waits until VictoriaMetrics holds series with cluster=<cluster>, each with the tenant label the VMUser
// route adds (none for "").
func (s *stack) wantMetrics(t *testing.T, cluster, tenant string) {
	t.Helper()
	eventually(t, deliveryTimeout, "metrics of "+cluster+" in VictoriaMetrics", func(ctx context.Context) (bool, string) {
		got, err := series(ctx, s.st.metrics, fmt.Sprintf(`{cluster=%q}`, cluster))
		if err != nil || len(got) == 0 {
			return false, fmt.Sprintf("%d series, err %v", len(got), err)
		}
		for _, lbls := range got {
			if lbls["tenant"] != tenant {
				return false, fmt.Sprintf("series %v: tenant %q, want %q", lbls, lbls["tenant"], tenant)
			}
		}
		self, host := false, false
		for _, lbls := range got {
			switch name := lbls["__name__"]; {
			case strings.HasPrefix(name, "otelcol_"):
				self = true
			case strings.HasPrefix(name, "system_"):
				host = true
			}
		}
		return self && host, fmt.Sprintf("%d series; from the collector's own scrape: %v, host metrics: %v; e.g. %v",
			len(got), self, host, got[0])
	})
}

// wantLog waits until the VictoriaLogs at addr holds the record with word, from cluster and with tenant.
func wantLog(t *testing.T, addr, what, word, cluster, tenant string) {
	t.Helper()
	eventually(t, deliveryTimeout, what+" "+word, func(ctx context.Context) (bool, string) {
		got, err := logs(ctx, addr, fmt.Sprintf("%q", word))
		if err != nil || len(got) != 1 {
			return false, fmt.Sprintf("%d records, err %v", len(got), err)
		}
		rec := got[0]
		if rec["k8s.cluster.name"] != cluster || rec["tenant"] != tenant {
			return false, fmt.Sprintf("record %v: want k8s.cluster.name %q, tenant %q", rec, cluster, tenant)
		}
		return true, ""
	})
}

// delivered writes a container log line and an audit event and waits for them and for metrics in storage.
func (s *stack) delivered(t *testing.T, run *run, cluster, tenant string) {
	t.Helper()
	logWord, auditWord := marker("log"), marker("audit")
	run.writePodLog(t, "data path "+logWord)
	run.writeAudit(t, auditWord)
	s.wantMetrics(t, cluster, tenant)
	wantLog(t, s.st.logs, "log", logWord, cluster, tenant)
	wantLog(t, s.st.audit, "audit log", auditWord, cluster, tenant)
}

// TestChildDataPath: a child's rendered collector (scenario 01, HTTPS to its regional's public vmauth) delivers
// metrics with cluster=<child> and its tenant, logs and audit logs; data written while vmauth is down arrives after
// it comes back (the exporters' sending queues).
func TestChildDataPath(t *testing.T) {
	t.Parallel()
	s := newStack(t, "01-regional-child", func(r *rendered) []bundleRef {
		return []bundleRef{r.childBundle(t, "child-1"), r.childBundle(t, "child-2"), r.adminBundle(t, "regional-1")}
	})
	tenant := s.r.childBundle(t, "child-1").tenant
	run := runCollector(t, s.r, "child-1", s.netw, s.vmauth.addr, nil)
	s.delivered(t, run, "child-1", tenant)

	s.vmauth.Stop()
	logWord, auditWord := marker("outagelog"), marker("outageaudit")
	run.writePodLog(t, "during the outage "+logWord)
	run.writeAudit(t, auditWord)
	eventually(t, deliveryTimeout, "exports fail while vmauth is down", func(ctx context.Context) (bool, string) {
		body, _, err := get(ctx, "http://"+run.telemetry+"/metrics")
		return err == nil && containsRetry(string(body)), "no failed export attempt yet"
	})
	if got, _ := logs(context.Background(), s.st.logs, fmt.Sprintf("%q", logWord)); len(got) != 0 {
		t.Fatalf("the outage line was stored while vmauth was down: %v", got)
	}
	s.vmauth.Start()
	wantLog(t, s.st.logs, "log sent during the outage", logWord, "child-1", tenant)
	wantLog(t, s.st.audit, "audit log sent during the outage", auditWord, "child-1", tenant)
}

// TestChildWrongPassword: with a wrong password vmauth answers 401, the collector's own
// otelcol_exporter_send_failed_* counters rise and nothing reaches storage.
func TestChildWrongPassword(t *testing.T) {
	t.Parallel()
	s := newStack(t, "01-regional-child", func(r *rendered) []bundleRef {
		return []bundleRef{r.childBundle(t, "child-1"), r.adminBundle(t, "regional-1")}
	})
	run := runCollector(t, s.r, "child-1", s.netw, s.vmauth.addr, map[string]string{"KOF_VM_PASSWORD": "not-the-password"})
	run.writePodLog(t, "with a wrong password "+marker("log"))
	run.writeAudit(t, marker("audit"))
	eventually(t, deliveryTimeout, "otelcol_exporter_send_failed_* rises", func(ctx context.Context) (bool, string) {
		n, err := run.sendFailed(ctx)
		return err == nil && n > 0, fmt.Sprintf("sum %v, err %v", n, err)
	})
	time.Sleep(3 * time.Second)
	ctx := context.Background()
	if got, err := series(ctx, s.st.metrics, `{cluster="child-1"}`); err != nil || len(got) != 0 {
		t.Errorf("VictoriaMetrics holds %d series of child-1 (err %v), want none", len(got), err)
	}
	for what, addr := range map[string]string{"logs": s.st.logs, "audit logs": s.st.audit} {
		if got, err := logs(ctx, addr, "*"); err != nil || len(got) != 0 {
			t.Errorf("VictoriaLogs (%s) holds %d records (err %v), want none", what, len(got), err)
		}
	}
}

// TestRegionalAdminDataPath: the regional cluster's own collector (scenario 01) writes to its in-cluster vmauth
// with the regional admin's credentials; its data carries no tenant.
func TestRegionalAdminDataPath(t *testing.T) {
	t.Parallel()
	s := newStack(t, "01-regional-child", func(r *rendered) []bundleRef {
		return []bundleRef{r.childBundle(t, "child-1"), r.adminBundle(t, "regional-1")}
	})
	run := runCollector(t, s.r, "regional-1", s.netw, s.vmauth.addr, nil)
	s.delivered(t, run, "regional-1", "")
}

// TestIstioChildDataPath: an Istio child (scenario 12) writes over the mesh to `http://<regional>-vmauth:8427`.
func TestIstioChildDataPath(t *testing.T) {
	t.Parallel()
	s := newStack(t, "12-istio-regional-child", func(r *rendered) []bundleRef {
		return []bundleRef{r.childBundle(t, "child-istio"), r.adminBundle(t, "regional-istio")}
	})
	run := runCollector(t, s.r, "child-istio", s.netw, s.vmauth.addr, nil)
	s.delivered(t, run, "child-istio", s.r.childBundle(t, "child-istio").tenant)
}

// containsRetry reports whether the collector's metrics show a failed export attempt (an enqueue or send failure
// counter, or a non-empty sending queue).
func containsRetry(metrics string) bool {
	for _, line := range splitLines(metrics) {
		if len(line) == 0 || line[0] == '#' {
			continue
		}
		for _, p := range []string{"otelcol_exporter_queue_size", "otelcol_exporter_send_failed_"} {
			if len(line) > len(p) && line[:len(p)] == p && !endsWithZero(line) {
				return true
			}
		}
	}
	return false
}
