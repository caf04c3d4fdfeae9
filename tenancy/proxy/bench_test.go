package proxy

import (
	"bytes"
	"context"
	"encoding/json"
	"fmt"
	"io"
	"net/http"
	"net/url"
	"os"
	"sort"
	"strconv"
	"strings"
	"sync"
	"syscall"
	"testing"
	"time"
)

// benchSeries is how many series of acme the benchmark's queries read (a dashboard panel over a fleet).
const benchSeries = 2000

var benchOnce sync.Once

// writeBenchSeries writes benchSeries counters for acme through vmauth, once per run.
func (s *stack) writeBenchSeries(b *testing.B) {
	benchOnce.Do(func() {
		var buf bytes.Buffer
		var ts []int64
		for i := 20; i >= 0; i-- {
			ts = append(ts, s.t0.Add(-time.Duration(i)*30*time.Second).UnixMilli())
		}
		for k := 0; k < benchSeries; k++ {
			vals := make([]float64, len(ts))
			for i := range vals {
				vals[i] = float64(i * (k + 1))
			}
			line, _ := json.Marshal(map[string]any{"metric": map[string]string{"__name__": "kof_bench_total",
				"instance": "i" + strconv.Itoa(k), "job": []string{"app", "db", "web"}[k%3], "cluster": "c-acme"},
				"values": vals, "timestamps": ts})
			buf.Write(line)
			buf.WriteByte('\n')
		}
		code, body, err := s.asTenant(context.Background(), "acme", http.MethodPost, "/vm/insert/0/prometheus/api/v1/import", &buf, "")
		if err != nil || code/100 != 2 {
			b.Fatalf("import bench series: %d %v %s", code, err, body)
		}
		resp, err := http.Get(s.vm.URL + "/internal/force_flush") //nolint:noctx // loopback
		if err != nil {
			b.Fatal(err)
		}
		resp.Body.Close()
	})
}

// cpuOf returns the user+system CPU time of process pid (/proc/<pid>/stat, clock ticks of 10 ms).
func cpuOf(pid int) (time.Duration, error) {
	b, err := os.ReadFile(fmt.Sprintf("/proc/%d/stat", pid))
	if err != nil {
		return 0, err
	}
	f := strings.Fields(string(b[bytes.LastIndexByte(b, ')')+2:]))
	ut, _ := strconv.ParseInt(f[11], 10, 64)
	st, _ := strconv.ParseInt(f[12], 10, 64)
	return time.Duration(ut+st) * 10 * time.Millisecond, nil
}

// selfCPU returns this process's user+system CPU time (the clients and the proxy, which runs in it).
func selfCPU() time.Duration {
	var ru syscall.Rusage
	_ = syscall.Getrusage(syscall.RUSAGE_SELF, &ru)
	return time.Duration(ru.Utime.Nano() + ru.Stime.Nano())
}

// percentile returns the p-th percentile (0..1) of sorted durations.
func percentile(d []time.Duration, p float64) time.Duration {
	return d[int(p*float64(len(d)-1))]
}

// BenchmarkProxyOverhead measures what the proxy adds to a metrics query, against the same query (as the proxy
// rewrites it) sent directly to VictoriaMetrics in the same run: 1,000 queries each way over 2,000 series of acme
// (20 with -short), alternating, latency p50 and p99 of both and their difference, and the CPU of the whole path
// (this process, which holds the clients and the proxy, plus VictoriaMetrics) for each way. Targets (not in
// -short): p50 overhead under 2 ms, proxied CPU at most 1.2x the direct CPU.
func BenchmarkProxyOverhead(b *testing.B) {
	s := theStack(b)
	s.writeBenchSeries(b)
	n := 1000
	if testing.Short() {
		n = 20
	}
	queries := []string{`sum by (job) (rate(kof_bench_total[5m]))`, `topk(5, kof_bench_total)`,
		`count(kof_bench_total{job="app"})`, `quantile(0.9, max_over_time(kof_bench_total[2m]))`}
	tok := s.issuer.token(b, "valid", "bench", testUsers["acme"])
	client := &http.Client{Transport: &http.Transport{MaxIdleConnsPerHost: 4}}
	at := strconv.FormatInt(s.t0.Unix(), 10)
	send := func(base, q, token string) time.Duration {
		req, _ := http.NewRequest(http.MethodGet, base+"?"+url.Values{"query": {q}, "time": {at}}.Encode(), nil)
		if token != "" {
			req.Header.Set("Authorization", "Bearer "+token)
		}
		start := time.Now()
		resp, err := client.Do(req)
		if err != nil {
			b.Fatal(err)
		}
		body, _ := io.ReadAll(resp.Body)
		resp.Body.Close()
		d := time.Since(start)
		if resp.StatusCode != http.StatusOK || !bytes.Contains(body, []byte(`"status":"success"`)) {
			b.Fatalf("%s %q: %d %.200s", base, q, resp.StatusCode, body)
		}
		return d
	}
	restricted := make([]string, len(queries))
	for i, q := range queries {
		r, err := RestrictQuery(q, acmeOnly, DefaultMaxQueryBytes)
		if err != nil {
			b.Fatal(err)
		}
		restricted[i] = r
	}
	vmPID := s.vm.PID()
	direct, proxied := s.vm.URL+"/api/v1/query", s.proxy.URL+MetricsPrefix+"/api/v1/query"
	for i := 0; i < 20; i++ { // warm both paths (connections, caches, the JWKS)
		send(direct, restricted[i%len(queries)], "")
		send(proxied, queries[i%len(queries)], tok)
	}
	b.ResetTimer()
	for it := 0; it < b.N; it++ {
		var dLat, pLat []time.Duration
		var dCPU, pCPU time.Duration
		for j := 0; j < n; j++ {
			k := j % len(queries)
			vm0, self0 := mustCPU(b, vmPID), selfCPU()
			dLat = append(dLat, send(direct, restricted[k], ""))
			vm1, self1 := mustCPU(b, vmPID), selfCPU()
			pLat = append(pLat, send(proxied, queries[k], tok))
			vm2, self2 := mustCPU(b, vmPID), selfCPU()
			dCPU += vm1 - vm0 + self1 - self0
			pCPU += vm2 - vm1 + self2 - self1
		}
		sort.Slice(dLat, func(i, j int) bool { return dLat[i] < dLat[j] })
		sort.Slice(pLat, func(i, j int) bool { return pLat[i] < pLat[j] })
		ms := func(d time.Duration) float64 { return float64(d.Microseconds()) / 1000 }
		p50, p99 := percentile(pLat, 0.5)-percentile(dLat, 0.5), percentile(pLat, 0.99)-percentile(dLat, 0.99)
		ratio := float64(pCPU) / float64(max(dCPU, time.Millisecond))
		b.ReportMetric(ms(percentile(dLat, 0.5)), "direct-p50-ms")
		b.ReportMetric(ms(percentile(pLat, 0.5)), "proxy-p50-ms")
		b.ReportMetric(ms(p50), "overhead-p50-ms")
		b.ReportMetric(ms(p99), "overhead-p99-ms")
		b.ReportMetric(ratio, "cpu-proxy/direct")
		fmt.Printf("tenant proxy, %d queries over %d series: direct p50 %.2f ms p99 %.2f ms; proxied p50 %.2f ms p99 %.2f ms; "+
			"overhead p50 %.2f ms p99 %.2f ms; CPU direct %v, proxied %v, ratio %.2f (targets: p50 overhead < 2 ms, CPU <= 1.2x)\n",
			n, benchSeries, ms(percentile(dLat, 0.5)), ms(percentile(dLat, 0.99)), ms(percentile(pLat, 0.5)),
			ms(percentile(pLat, 0.99)), ms(p50), ms(p99), dCPU, pCPU, ratio)
		if !testing.Short() {
			if p50 >= 2*time.Millisecond {
				b.Errorf("p50 overhead %v, want under 2 ms", p50)
			}
			if ratio > 1.2 {
				b.Errorf("proxied CPU %v is %.2fx the direct CPU %v; want at most 1.2x", pCPU, ratio, dCPU)
			}
		}
	}
}

func mustCPU(b *testing.B, pid int) time.Duration {
	d, err := cpuOf(pid)
	if err != nil {
		b.Fatal(err)
	}
	return d
}
