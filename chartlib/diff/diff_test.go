package diff

import (
	"bytes"
	"encoding/json"
	"errors"
	"fmt"
	"sort"
	"strings"
	"testing"

	"github.com/google/go-cmp/cmp"
	"k8s.io/apimachinery/pkg/apis/meta/v1/unstructured"
	"sigs.k8s.io/yaml"

	"kof.dev/kof/chartlib/fleet"
	"kof.dev/kof/chartlib/manifest"
)

// obj parses one YAML object.
func obj(t *testing.T, y string) *unstructured.Unstructured {
	t.Helper()
	m := map[string]any{}
	if err := yaml.Unmarshal([]byte(y), &m); err != nil {
		t.Fatal(err)
	}
	return &unstructured.Unstructured{Object: m}
}

// release is one release of the test cluster: its objects.
type release struct {
	name, via string
	objs      []*unstructured.Unstructured
	values    map[string]any
	err       error
}

// oneCluster returns a fleet of one regional cluster r1 with the given releases in namespace kof.
func oneCluster(rels ...release) *fleet.Fleet {
	c := &fleet.Cluster{Name: "r1", Namespace: "kcm-system", Dir: "r1", Role: fleet.RoleRegional}
	for _, r := range rels {
		objs := make([]manifest.Object, 0, len(r.objs))
		for _, o := range r.objs {
			objs = append(objs, manifest.Object{Unstructured: o.DeepCopy(), Source: r.name + "/templates/x.yaml"})
		}
		via := r.via
		if via == "" {
			via = "MultiClusterService kof-regional"
		}
		c.Services = append(c.Services, &fleet.Service{Via: via, Name: r.name, Namespace: "kof", Local: true,
			Chart: r.name, Objects: manifest.New(objs...), Values: r.values, Err: r.err})
	}
	return &fleet.Fleet{Clusters: []*fleet.Cluster{c}}
}

const (
	statefulSet = `apiVersion: apps/v1
kind: StatefulSet
metadata: {name: vmstorage, namespace: kof}
spec:
  serviceName: vmstorage
  selector: {matchLabels: {app: vmstorage}}
  volumeClaimTemplates:
  - metadata: {name: data}
    spec: {storageClassName: standard, resources: {requests: {storage: 10Gi}}}
  template: {metadata: {labels: {app: vmstorage}}}
`
	deployment = `apiVersion: apps/v1
kind: Deployment
metadata: {name: promxy, namespace: kof}
spec:
  replicas: 1
  selector: {matchLabels: {app: promxy}}
  template: {metadata: {labels: {app: promxy}}}
`
	service = `apiVersion: v1
kind: Service
metadata: {name: vmauth, namespace: kof}
spec: {clusterIP: None, ports: [{port: 8427}]}
`
	pvc = `apiVersion: v1
kind: PersistentVolumeClaim
metadata: {name: data, namespace: kof}
spec: {storageClassName: standard, accessModes: [ReadWriteOnce], resources: {requests: {storage: 10Gi}}}
`
	crd = `apiVersion: apiextensions.k8s.io/v1
kind: CustomResourceDefinition
metadata: {name: promxyservergroups.kof.k0rdent.mirantis.com}
spec:
  group: kof.k0rdent.mirantis.com
  versions:
  - {name: v1alpha1, served: true, storage: false}
  - {name: v1beta1, served: true, storage: true}
`
	secret = `apiVersion: v1
kind: Secret
metadata: {name: kof-vmuser-creds-child-1-0123456789, namespace: kof}
data: {username: Y2hpbGQ=, password: c2VjcmV0}
`
	vmUser = `apiVersion: operator.victoriametrics.com/v1beta1
kind: VMUser
metadata: {name: kof-vmuser-child-1-0123456789, namespace: kof}
spec: {passwordRef: {name: kof-vmuser-creds-child-1-0123456789, key: password}}
`
	vmCluster = `apiVersion: operator.victoriametrics.com/v1beta1
kind: VMCluster
metadata: {name: cluster, namespace: kof}
spec:
  vmstorage:
    storage:
      volumeClaimTemplate:
        spec: {storageClassName: standard, resources: {requests: {storage: 10Gi}}}
`
)

// edit returns y with old replaced by new, failing when old is not in y (the planted change must apply).
func edit(t *testing.T, y, old, new string) string {
	t.Helper()
	if !strings.Contains(y, old) {
		t.Fatalf("planted change: %q not in\n%s", old, y)
	}
	return strings.Replace(y, old, new, 1)
}

// TestPlantedChanges plants one change per reason (and harmless ones, and none) in the old fleet's copy and checks
// the reasons the diff gives, the object statuses and the exit code.
func TestPlantedChanges(t *testing.T) {
	base := []string{statefulSet, deployment, service, pvc, crd, secret, vmUser, vmCluster}
	for _, tc := range []struct {
		name string
		// change returns the new side's storage release objects and other releases.
		change      func(t *testing.T) (storage []string, others []release)
		wantReasons []Reason
		wantMessage string            // a text one of the hurts' messages holds
		wantStatus  map[string]Status // object key → status
		wantExit    int
	}{
		{name: "no change", change: func(*testing.T) ([]string, []release) { return base, nil },
			wantExit: ExitNoChange},
		{name: "harmless: replicas", change: func(t *testing.T) ([]string, []release) {
			return replace(base, deployment, edit(t, deployment, "replicas: 1", "replicas: 2")), nil
		}, wantStatus: map[string]Status{"Deployment.apps kof/promxy": Changed}, wantExit: ExitChanges},
		{name: "status only (a live object's): no change", change: func(t *testing.T) ([]string, []release) {
			return replace(base, deployment, deployment+"status: {readyReplicas: 1}\n"), nil
		}, wantExit: ExitNoChange},
		{name: "harmless: object added", change: func(t *testing.T) ([]string, []release) {
			return append(append([]string{}, base...), edit(t, deployment, "name: promxy", "name: promxy-2")), nil
		}, wantStatus: map[string]Status{"Deployment.apps kof/promxy-2": Added}, wantExit: ExitChanges},
		{name: "immutable: StatefulSet selector", change: func(t *testing.T) ([]string, []release) {
			return replace(base, statefulSet, edit(t, statefulSet, "matchLabels: {app: vmstorage}",
				"matchLabels: {app: vmstorage, tier: storage}")), nil
		}, wantReasons: []Reason{ReasonImmutableField}, wantExit: ExitHurts},
		{name: "immutable: StatefulSet volumeClaimTemplates", change: func(t *testing.T) ([]string, []release) {
			return replace(base, statefulSet, edit(t, statefulSet, "storage: 10Gi", "storage: 20Gi")), nil
		}, wantReasons: []Reason{ReasonImmutableField}, wantExit: ExitHurts},
		{name: "immutable: Service clusterIP", change: func(t *testing.T) ([]string, []release) {
			return replace(base, service, edit(t, service, "clusterIP: None, ", "")), nil
		}, wantReasons: []Reason{ReasonImmutableField}, wantExit: ExitHurts},
		{name: "immutable: PVC storage class", change: func(t *testing.T) ([]string, []release) {
			return replace(base, pvc, edit(t, pvc, "storageClassName: standard", "storageClassName: fast")), nil
		}, wantReasons: []Reason{ReasonImmutableField}, wantExit: ExitHurts},
		{name: "workload selector", change: func(t *testing.T) ([]string, []release) {
			return replace(base, deployment, edit(t, deployment, "matchLabels: {app: promxy}",
				"matchLabels: {app: promxy-server}")), nil
		}, wantReasons: []Reason{ReasonSelectorChange}, wantExit: ExitHurts},
		{name: "CRD version made non-served", change: func(t *testing.T) ([]string, []release) {
			return replace(base, crd, edit(t, crd, "{name: v1alpha1, served: true", "{name: v1alpha1, served: false")), nil
		}, wantReasons: []Reason{ReasonCRDVersionRemoved}, wantExit: ExitHurts},
		{name: "CRD version removed", change: func(t *testing.T) ([]string, []release) {
			return replace(base, crd, edit(t, crd, "  - {name: v1alpha1, served: true, storage: false}\n", "")), nil
		}, wantReasons: []Reason{ReasonCRDVersionRemoved}, wantExit: ExitHurts},
		{name: "object moves to another release", change: func(t *testing.T) ([]string, []release) {
			return replace(base, deployment), []release{{name: "kof-promxy", objs: []*unstructured.Unstructured{
				obj(t, deployment)}}}
		}, wantReasons: []Reason{ReasonOwnerMoved},
			wantStatus: map[string]Status{"Deployment.apps kof/promxy": Moved}, wantExit: ExitHurts},
		{name: "credential Secret renamed", change: func(t *testing.T) ([]string, []release) {
			return replace(base, secret, edit(t, secret, "child-1-0123456789", "child-1-abcdefabcd")), nil
		}, wantReasons: []Reason{ReasonCredentialRenamed}, wantExit: ExitHurts},
		{name: "VMUser renamed", change: func(t *testing.T) ([]string, []release) {
			return replace(base, vmUser, edit(t, vmUser, "name: kof-vmuser-child-1-0123456789,",
				"name: kof-vmuser-child-1-abcdefabcd,")), nil
		}, wantReasons: []Reason{ReasonCredentialRenamed}, wantExit: ExitHurts},
		{name: "storage class of a VMCluster's volumes", change: func(t *testing.T) ([]string, []release) {
			return replace(base, vmCluster, edit(t, vmCluster, "storageClassName: standard", "storageClassName: fast")), nil
		}, wantReasons: []Reason{ReasonVolumeReplaced}, wantExit: ExitHurts,
			// regression: the path lost its dot ("specvmstorage.storage...")
			wantMessage: "spec.vmstorage.storage.volumeClaimTemplate.spec.storageClassName"},
		{name: "PVC removed", change: func(*testing.T) ([]string, []release) { return replace(base, pvc), nil },
			wantReasons: []Reason{ReasonVolumeReplaced},
			wantStatus:  map[string]Status{"PersistentVolumeClaim kof/data": Removed}, wantExit: ExitHurts},
	} {
		t.Run(tc.name, func(t *testing.T) {
			old := oneCluster(release{name: "kof-storage", objs: objs(t, base)})
			storage, others := tc.change(t)
			nw := oneCluster(append([]release{{name: "kof-storage", objs: objs(t, storage)}}, others...)...)
			r, err := Fleets(old, nw)
			if err != nil {
				t.Fatal(err)
			}
			var got []Reason
			for _, h := range r.Hurts() {
				got = append(got, h.Reason)
			}
			got = unique(got)
			if tc.wantMessage != "" && !strings.Contains(fmt.Sprint(r.Hurts()), tc.wantMessage) {
				t.Errorf("no hurt names %q: %v", tc.wantMessage, r.Hurts())
			}
			if diff := cmp.Diff(tc.wantReasons, got); diff != "" {
				t.Errorf("reasons (-want +got):\n%s\n%s", diff, text(t, r))
			}
			if code := r.ExitCode(); code != tc.wantExit {
				t.Errorf("exit code %d, want %d\n%s", code, tc.wantExit, text(t, r))
			}
			statuses := map[string]Status{}
			for _, c := range r.Clusters {
				for _, rel := range c.Releases {
					for _, o := range rel.Objects {
						statuses[o.Key] = o.Status
					}
				}
			}
			for k, want := range tc.wantStatus {
				if statuses[k] != want {
					t.Errorf("%s: status %q, want %q (all: %v)", k, statuses[k], want, statuses)
				}
			}
		})
	}
}

// A release that moves to another MultiClusterService, and one that no longer renders, hurt; its values' changes
// are listed field by field.
func TestReleaseChanges(t *testing.T) {
	old := oneCluster(release{name: "kof-collectors", values: map[string]any{"kof": map[string]any{"a": 1}}},
		release{name: "kof-storage", objs: []*unstructured.Unstructured{obj(t, deployment)}})
	nw := oneCluster(release{name: "kof-collectors", via: "MultiClusterService other",
		values: map[string]any{"kof": map[string]any{"a": 2, "b": "x"}}},
		release{name: "kof-storage", err: errors.New("render chart kof-storage: boom")})
	r, err := Fleets(old, nw)
	if err != nil {
		t.Fatal(err)
	}
	rels := r.Clusters[0].Releases
	if len(rels) != 2 {
		t.Fatalf("releases %+v, want 2", rels)
	}
	wantValues := []Field{{Path: "kof.a", Change: Changed, Old: 1, New: 2}, {Path: "kof.b", Change: Added, New: "x"}}
	if diff := cmp.Diff(wantValues, rels[0].Values); diff != "" {
		t.Errorf("values (-want +got):\n%s", diff)
	}
	if len(rels[0].Hurts) != 1 || rels[0].Hurts[0].Reason != ReasonOwnerMoved {
		t.Errorf("kof-collectors hurts %v, want one %s", rels[0].Hurts, ReasonOwnerMoved)
	}
	if len(rels[1].Hurts) != 1 || rels[1].Hurts[0].Reason != ReasonNewProblem {
		t.Errorf("kof-storage hurts %v, want one %s", rels[1].Hurts, ReasonNewProblem)
	}
	if r.ExitCode() != ExitHurts {
		t.Errorf("exit %d, want %d", r.ExitCode(), ExitHurts)
	}
}

// Secret data is never printed, in text or JSON: only a digest of each value.
func TestSecretDataRedacted(t *testing.T) {
	old := oneCluster(release{name: "kof-storage", objs: objs(t, []string{secret})})
	nw := oneCluster(release{name: "kof-storage", objs: objs(t, []string{edit(t, secret, "c2VjcmV0", "bmV3c2VjcmV0")})})
	r, err := Fleets(old, nw)
	if err != nil {
		t.Fatal(err)
	}
	var js bytes.Buffer
	if err := WriteJSON(&js, r); err != nil {
		t.Fatal(err)
	}
	out := text(t, r) + js.String()
	for _, s := range []string{"c2VjcmV0", "bmV3c2VjcmV0"} {
		if strings.Contains(out, s) {
			t.Errorf("the output shows the Secret's data %s:\n%s", s, out)
		}
	}
	if !strings.Contains(out, "data.password: \"<redacted sha256:") {
		t.Errorf("the output does not show the redacted change of data.password:\n%s", out)
	}
	var decoded map[string]any
	if err := json.Unmarshal(js.Bytes(), &decoded); err != nil || decoded["exitCode"] != float64(ExitChanges) {
		t.Errorf("json exitCode %v (%v), want %d", decoded["exitCode"], err, ExitChanges)
	}
}

func TestFieldPaths(t *testing.T) {
	old := obj(t, deployment)
	nw := obj(t, edit(t, deployment, "metadata: {name: promxy, namespace: kof}",
		"metadata: {name: promxy, namespace: kof, labels: {app.kubernetes.io/version: \"2\"}}"))
	got := Fields(old.Object, nw.Object, false)
	want := []Field{{Path: `metadata.labels`, Change: Added, New: map[string]any{"app.kubernetes.io/version": "2"}}}
	if diff := cmp.Diff(want, got); diff != "" {
		t.Errorf("fields (-want +got):\n%s", diff)
	}
	nw2 := obj(t, edit(t, deployment, "template: {metadata: {labels: {app: promxy}}}",
		"template: {metadata: {labels: {app: promxy, app.kubernetes.io/version: \"2\"}}}"))
	got = Fields(old.Object, nw2.Object, false)
	want = []Field{{Path: `spec.template.metadata.labels["app.kubernetes.io/version"]`, Change: Added, New: "2"}}
	if diff := cmp.Diff(want, got); diff != "" {
		t.Errorf("fields (-want +got):\n%s", diff)
	}
}

func objs(t *testing.T, ys []string) []*unstructured.Unstructured {
	out := make([]*unstructured.Unstructured, 0, len(ys))
	for _, y := range ys {
		out = append(out, obj(t, y))
	}
	return out
}

// replace returns list with old replaced by news (removed when none).
func replace(list []string, old string, news ...string) []string {
	var out []string
	for _, s := range list {
		if s == old {
			out = append(out, news...)
			continue
		}
		out = append(out, s)
	}
	return out
}

func unique(rs []Reason) []Reason {
	seen := map[Reason]bool{}
	var out []Reason
	for _, r := range rs {
		if !seen[r] {
			seen[r] = true
			out = append(out, r)
		}
	}
	sort.Slice(out, func(i, j int) bool { return out[i] < out[j] })
	return out
}

func text(t *testing.T, r *Report) string {
	t.Helper()
	var b bytes.Buffer
	if err := WriteText(&b, r); err != nil {
		t.Fatal(err)
	}
	return b.String()
}

// A release whose HelmRelease moves to another namespace (the umbrella's, out of KCM's system namespace) hurts, and
// the hurt gives the command that makes the move safe: suspending the old HelmRelease.
func TestHelmReleaseMoveNamesTheSuspendCommand(t *testing.T) {
	old := oneCluster(release{name: "kof-mothership", via: "HelmRelease kcm-system/kof-mothership"})
	nw := oneCluster(release{name: "kof-mothership", via: "HelmRelease kof/kof-mothership"})
	r, err := Fleets(old, nw)
	if err != nil {
		t.Fatal(err)
	}
	hurts := r.Hurts()
	if len(hurts) != 1 || hurts[0].Reason != ReasonOwnerMoved {
		t.Fatalf("hurts %v, want one %s", hurts, ReasonOwnerMoved)
	}
	want := `kubectl -n kcm-system patch helmrelease kof-mothership --type merge -p '{"spec":{"suspend":true}}'`
	if !strings.HasSuffix(hurts[0].Message, want) {
		t.Errorf("hurt %q does not end with the command %q", hurts[0].Message, want)
	}
	// A move between two other kinds of owner has no such command.
	mcs := oneCluster(release{name: "kof-mothership", via: "MultiClusterService other"})
	r, err = Fleets(old, mcs)
	if err != nil {
		t.Fatal(err)
	}
	if h := r.Hurts(); len(h) != 1 || strings.Contains(h[0].Message, "kubectl") {
		t.Errorf("hurts %v, want one without a command", h)
	}
}
