package scale

import (
	"context"
	"fmt"
	"testing"
	"time"

	corev1 "k8s.io/api/core/v1"
	"sigs.k8s.io/controller-runtime/pkg/client"

	"kof.dev/kof/operator/names"
	"kof.dev/kof/operator/outputs"
)

// Test1000ChildrenDistinctCredentials checks that 1,000 children c0…c999 in one namespace get 1,000 distinct
// credential Secrets and VMUsers (the Adler-32 names of earlier releases give them 424), each with its own username.
func Test1000ChildrenDistinctCredentials(t *testing.T) {
	ctx := context.Background()
	op, err := startOperator()
	if err != nil {
		t.Fatal(err)
	}
	defer op.close()
	const ns, nr, nc = "distinct", 20, 1000
	if err := fleet(ctx, ns, nr, nc); err != nil {
		t.Fatal(err)
	}
	if err := steady(ctx, op, ns, nr, nc, 3*time.Second); err != nil {
		t.Fatal(err)
	}
	var secrets corev1.SecretList
	if err := env.Client.List(ctx, &secrets, client.InNamespace(ns), client.MatchingLabels(outputs.Labels())); err != nil {
		t.Fatal(err)
	}
	users := map[string]string{}
	for _, s := range secrets.Items {
		users[s.Name] = string(s.Data[outputs.UsernameKey])
	}
	distinct := map[string]bool{}
	for i := range nc {
		base := names.ChildVMUserBase(ns, fmt.Sprintf("c%d", i))
		u, ok := users[names.VMUserSecret(base)]
		if !ok || u != base {
			t.Fatalf("child c%d: secret %s missing or username %q", i, names.VMUserSecret(base), u)
		}
		distinct[u] = true
	}
	if len(distinct) != nc {
		t.Errorf("%d distinct child usernames, want %d", len(distinct), nc)
	}
	legacy := map[string]bool{}
	for i := range nc {
		legacy[names.LegacyChildVMUserBase(ns, fmt.Sprintf("c%d", i))] = true
	}
	t.Logf("Adler-32 names of earlier releases for the same children: %d distinct", len(legacy))
	if w, err := resync(ctx, op, ns); err != nil || w != 0 {
		t.Errorf("forced resync made %d writes (err %v), want 0", w, err)
	}
}

// BenchmarkFleet creates 20 regional and 1,000 child ClusterDeployments and reports the time to steady state, API
// writes per desired object, writes during a forced resync and the process's peak RSS.
// Run: go test -run XXX -bench Fleet -benchtime 1x ./operator/internal/scale/
func BenchmarkFleet(b *testing.B) {
	ctx := context.Background()
	const nr, nc = 20, 1000
	// Desired objects: per regional its ConfigMap, record rules ConfigMap, admin Secret, VMUser and propagation MCS,
	// PromxyServerGroup and three VMStorageConnections (9); per child its ConfigMap, Secret, VMUser and propagation
	// MCS (4). The writes also count the metadata patches (finalizer and name label on each ClusterDeployment,
	// finalizer on each regional ConfigMap), so the floor is (20×11 + 1,000×5) / 4,180 ≈ 1.25.
	const desired = nr*9 + nc*4
	for i := 0; b.Loop(); i++ {
		op, err := startOperator()
		if err != nil {
			b.Fatal(err)
		}
		ns := fmt.Sprintf("bench-%d", i)
		start := time.Now()
		if err := fleet(ctx, ns, nr, nc); err != nil {
			b.Fatal(err)
		}
		const quiet = 3 * time.Second
		if err := steady(ctx, op, ns, nr, nc, quiet); err != nil {
			b.Fatal(err)
		}
		elapsed := time.Since(start) - quiet
		writes := op.writes.Load()
		resyncWrites, err := resync(ctx, op, ns)
		if err != nil {
			b.Fatal(err)
		}
		op.close()
		b.ReportMetric(elapsed.Seconds(), "s-to-steady")
		b.ReportMetric(float64(writes)/desired, "writes/desired-object")
		b.ReportMetric(float64(resyncWrites), "resync-writes")
		b.ReportMetric(peakRSS(), "peak-RSS-MiB")
	}
}
