package manager

import (
	"runtime/debug"
	"strings"
	"testing"

	"k8s.io/client-go/rest"
)

// The operator's API client gets the configured limits (client-go's defaults would throttle a large fleet, and so
// did 50/100 per kind) and uncompressed responses, and a bad limit is an error naming the flag and the chart value, the input left unchanged.
func TestWithClientLimits(t *testing.T) {
	in := &rest.Config{Host: "https://api.example", QPS: 5, Burst: 10}
	out, err := WithClientLimits(in, DefaultQPS, DefaultBurst)
	if err != nil {
		t.Fatal(err)
	}
	if out.QPS != 200 || out.Burst != 400 || out.Host != in.Host || !out.DisableCompression {
		t.Errorf("limits qps %g burst %d host %q compression off %t, want 200, 400, %q, true", out.QPS, out.Burst,
			out.Host, out.DisableCompression, in.Host)
	}
	if in.QPS != 5 || in.Burst != 10 || in.DisableCompression {
		t.Errorf("the input was changed: qps %g burst %d", in.QPS, in.Burst)
	}
	for _, tt := range []struct {
		qps   float64
		burst int
		want  string
	}{
		{0, 10, "--kube-api-qps=0"}, {-1, 10, "operator.kubeAPI.qps"}, {20, 0, "--kube-api-burst=0"},
		{20, 10, "operator.kubeAPI.burst"},
	} {
		if _, err := WithClientLimits(in, tt.qps, tt.burst); err == nil || !strings.Contains(err.Error(), tt.want) {
			t.Errorf("qps %g burst %d: error %v, want one naming %s", tt.qps, tt.burst, err, tt.want)
		}
	}
}

// A negative --gc-percent is an error naming the flag and the chart value; 0 leaves the runtime's setting.
func TestSetGCPercent(t *testing.T) {
	err := SetGCPercent(-5)
	if err == nil || !strings.Contains(err.Error(), "--gc-percent=-5") || !strings.Contains(err.Error(), "operator.gcPercent") {
		t.Errorf("SetGCPercent(-5) = %v, want an error naming the flag and the value", err)
	}
	before := debug.SetGCPercent(77)
	defer debug.SetGCPercent(before)
	if err := SetGCPercent(0); err != nil {
		t.Fatal(err)
	}
	if got := debug.SetGCPercent(77); got != 77 {
		t.Errorf("SetGCPercent(0) changed the GC percent to %d", got)
	}
	if err := SetGCPercent(DefaultGCPercent); err != nil {
		t.Fatal(err)
	}
	if got := debug.SetGCPercent(77); got != DefaultGCPercent {
		t.Errorf("GC percent %d, want %d", got, DefaultGCPercent)
	}
}
