package scale

import (
	"context"
	"fmt"
	"os"
	"reflect"
	"strconv"
	"testing"
	"time"

	"k8s.io/apimachinery/pkg/apis/meta/v1/unstructured"
	"sigs.k8s.io/controller-runtime/pkg/client"

	kofv1 "kof.dev/kof/operator/api/v1beta1"
	"kof.dev/kof/operator/config"
	"kof.dev/kof/operator/names"
	"kof.dev/kof/operator/outputs"
	"kof.dev/kof/operator/vmapi"
)

// envBurstChildren sets the child count of TestBurstEqualsSlowSequence (default 100; the benchmark's fleet is 1,000).
const envBurstChildren = "KOF_SCALE_BURST_CHILDREN"

// TestBurstEqualsSlowSequence runs the operator in its own process and creates the same fleet twice, in namespace burst all at once (8 parallel clients) and
// in namespace slow one ClusterDeployment at a time, each child only after the previous one has its VMUser, and
// checks that both end with exactly the objects outputs.Compute gives for their fleet: every desired object live with
// the desired fields (passwords apart, which are random), and no other object labelled managed-by kof-operator.
func TestBurstEqualsSlowSequence(t *testing.T) {
	nc := 100
	if v := os.Getenv(envBurstChildren); v != "" {
		n, err := strconv.Atoi(v)
		if err != nil || n < 1 {
			t.Fatalf("%s=%q: want a positive number of children", envBurstChildren, v)
		}
		nc = n
	}
	const nr = 5
	ctx := context.Background()
	sh, err := shippedOperator(testConfig().ReleaseNamespace, "burst", "slow")
	if err != nil {
		t.Fatal(err)
	}
	if err := storageClusters(ctx, sh.cfg); err != nil {
		t.Fatal(err)
	}
	p, err := startProcess(sh)
	if err != nil {
		t.Fatal(err)
	}
	defer p.stop()
	if err := fleet(ctx, "burst", nr, nc); err != nil {
		t.Fatal(err)
	}
	if err := slowFleet(ctx, "slow", nr, nc); err != nil {
		t.Fatal(err)
	}
	for _, ns := range []string{"burst", "slow"} {
		if _, err := settle(ctx, p.counts.writes.Load, p.exited, "", ns, nr, nc, 3*time.Second, 100*time.Millisecond); err != nil {
			t.Fatal(err)
		}
	}
	for _, ns := range []string{"burst", "slow"} {
		if problems := compareWithCompute(ctx, sh.cfg, ns); len(problems) > 0 {
			t.Errorf("namespace %s: %d objects differ from outputs.Compute, first: %v", ns, len(problems), problems[0])
		}
	}
}

// slowFleet creates the fleet of fleet (same names, labels and spread) one object at a time, waiting after each
// child until its VMUser exists.
func slowFleet(ctx context.Context, ns string, nr, nc int) error {
	if err := fleet(ctx, ns, nr, 0); err != nil {
		return err
	}
	for i := range nc {
		l := map[string]string{kofv1.TenantLabel: "t" + strconv.Itoa(i%7)}
		if i%10 == 0 {
			l[kofv1.RegionalClusterNameLabel] = "r" + strconv.Itoa(i%nr)
		}
		name := "c" + strconv.Itoa(i)
		if err := env.Client.Create(ctx, cd(ns, name, kofv1.RoleChild, i%nr, l, nil)); err != nil {
			return err
		}
		key := client.ObjectKey{Namespace: ns, Name: names.VMUser(names.ChildVMUserBase(ns, name))}
		for deadline := time.Now().Add(time.Minute); ; time.Sleep(20 * time.Millisecond) {
			if err := env.Client.Get(ctx, key, &vmapi.VMUser{}); err == nil {
				break
			}
			if time.Now().After(deadline) {
				return fmt.Errorf("child %s: no VMUser %s after a minute", name, key.Name)
			}
		}
	}
	return nil
}

// compareWithCompute returns a problem for every object of outputs.Compute for namespace ns that is missing or has a
// desired field with another value (a Secret's password is only required to be set), and for every object labelled
// managed-by kof-operator in ns of a kind Compute gives that Compute does not give.
func compareWithCompute(ctx context.Context, cfg config.Config, ns string) []string {
	objs, err := desiredObjects(ctx, cfg, ns)
	if err != nil {
		return []string{err.Error()}
	}
	var problems []string
	want := map[string]bool{}
	kinds := map[string]unstructured.Unstructured{}
	for _, d := range objs {
		want[d.GetKind()+"/"+d.GetNamespace()+"/"+d.GetName()] = true
		kinds[d.GetKind()] = *d
		live := &unstructured.Unstructured{}
		live.SetGroupVersionKind(d.GroupVersionKind())
		if err := env.Client.Get(ctx, client.ObjectKeyFromObject(d), live); err != nil {
			problems = append(problems, fmt.Sprintf("%s %s: %v", d.GetKind(), d.GetName(), err))
			continue
		}
		if d.GetKind() == "Secret" {
			if pw, _, _ := unstructured.NestedString(live.Object, "data", outputs.PasswordKey); pw == "" {
				problems = append(problems, fmt.Sprintf("Secret %s: no password", d.GetName()))
			}
			unstructured.RemoveNestedField(d.Object, "data", outputs.PasswordKey)
		}
		if path := firstDifference(d.Object, live.Object, ""); path != "" {
			problems = append(problems, fmt.Sprintf("%s %s: %s differs", d.GetKind(), d.GetName(), path))
		}
	}
	for kind, sample := range kinds {
		if sample.GetNamespace() == "" {
			continue // cluster-scoped (MultiClusterServices): the fleets of both namespaces share the list
		}
		list := &unstructured.UnstructuredList{}
		list.SetGroupVersionKind(sample.GroupVersionKind().GroupVersion().WithKind(kind + "List"))
		if err := env.Client.List(ctx, list, client.InNamespace(ns), client.MatchingLabels{kofv1.ManagedByLabel: kofv1.ManagedBy}); err != nil {
			problems = append(problems, err.Error())
			continue
		}
		for _, o := range list.Items {
			if !want[kind+"/"+ns+"/"+o.GetName()] {
				problems = append(problems, fmt.Sprintf("%s %s: not in outputs.Compute", kind, o.GetName()))
			}
		}
	}
	return problems
}

// firstDifference returns the path of the first field of want (a map, slice or value of unstructured JSON) whose
// value live does not have, "" when live has every field of want with its value (live may hold more fields, those
// the API server or other field managers set).
func firstDifference(want, live any, path string) string {
	switch w := want.(type) {
	case map[string]any:
		l, ok := live.(map[string]any)
		if !ok {
			return path
		}
		for k, v := range w {
			if p := firstDifference(v, l[k], path+"."+k); p != "" {
				return p
			}
		}
		return ""
	case []any:
		l, ok := live.([]any)
		if !ok || len(l) != len(w) {
			return path
		}
		for i := range w {
			if p := firstDifference(w[i], l[i], fmt.Sprintf("%s[%d]", path, i)); p != "" {
				return p
			}
		}
		return ""
	default:
		if !reflect.DeepEqual(want, live) {
			return path
		}
		return ""
	}
}
