package fleet

import (
	"bytes"
	"context"
	"encoding/base64"
	"fmt"
	"os"
	"path/filepath"
	"strings"
	"testing"

	"github.com/google/go-cmp/cmp"
	"k8s.io/apimachinery/pkg/apis/meta/v1/unstructured"

	"kof.dev/kof/chartlib/manifest"
	"kof.dev/kof/chartlib/sveltos"
	"kof.dev/kof/operator/names"
)

// chartsDir is the repository's charts directory.
const chartsDir = "../../charts"

// ns is the namespace of the test ClusterDeployments.
const ns = "kcm-system"

// clusterTemplate returns an AWS ClusterTemplate named name (status.providers as KCM reports them).
func clusterTemplate(name string) *unstructured.Unstructured {
	return &unstructured.Unstructured{Object: map[string]any{
		"apiVersion": "k0rdent.mirantis.com/v1beta1", "kind": "ClusterTemplate",
		"metadata": map[string]any{"name": name, "namespace": ns},
		"spec":     map[string]any{"helm": map[string]any{"chartSpec": map[string]any{"chart": name, "version": "1.0.0"}}},
		"status":   map[string]any{"providers": []any{"infrastructure-aws"}},
	}}
}

// clusterDeployment returns a ClusterDeployment of the AWS template in region, with labels and annotations.
func clusterDeployment(name, template, region string, labels, annotations map[string]string) *unstructured.Unstructured {
	cd := &unstructured.Unstructured{Object: map[string]any{
		"apiVersion": "k0rdent.mirantis.com/v1beta1", "kind": "ClusterDeployment",
		"spec": map[string]any{"template": template, "config": map[string]any{"region": region}},
	}}
	cd.SetName(name)
	cd.SetNamespace(ns)
	cd.SetLabels(labels)
	cd.SetAnnotations(annotations)
	return cd
}

// regional returns a regional ClusterDeployment with the default domain `<name>.example.com`.
func regional(name, region string) *unstructured.Unstructured {
	return clusterDeployment(name, "aws-standalone", region,
		map[string]string{"k0rdent.mirantis.com/kof-cluster-role": "regional"},
		map[string]string{"k0rdent.mirantis.com/kof-regional-domain": name + ".example.com"})
}

// child returns a child ClusterDeployment in region.
func child(name, region string, labels map[string]string) *unstructured.Unstructured {
	l := map[string]string{"k0rdent.mirantis.com/kof-cluster-role": "child"}
	for k, v := range labels {
		l[k] = v
	}
	return clusterDeployment(name, "aws-standalone", region, l, nil)
}

// renderFleet renders the default umbrella for objs, failing the test on error.
func renderFleet(t testing.TB, opts Options) *Fleet {
	t.Helper()
	opts.ChartsDir = chartsDir
	f, err := Render(context.Background(), opts)
	if err != nil {
		t.Fatalf("render: %v", err)
	}
	return f
}

// operatorObject returns the operator output of kind ns/name, nil when absent.
func operatorObject(f *Fleet, kind, name string) *unstructured.Unstructured {
	for _, o := range f.Operator {
		if o.GetKind() == kind && o.GetNamespace() == ns && o.GetName() == name {
			return o
		}
	}
	return nil
}

func TestChildWithoutRegionalFailsAlone(t *testing.T) {
	f := renderFleet(t, Options{Clusters: []*unstructured.Unstructured{
		clusterTemplate("aws-standalone"), regional("r1", "us-east-2"),
		child("near", "us-east-2", nil), child("far", "eu-west-1", nil),
	}})
	far := f.Cluster("far")
	if far == nil || !far.Failed() {
		t.Fatalf("child far without a regional in its region did not fail: %+v", far)
	}
	if got := strings.Join(far.Problems(), "\n"); !strings.Contains(got, "k0rdent.mirantis.com/kof-regional-cluster-name") {
		t.Errorf("far's problems do not name the label to set:\n%s", got)
	}
	for _, name := range []string{"mgmt", "r1", "near"} {
		if c := f.Cluster(name); c == nil || c.Failed() {
			t.Errorf("cluster %s failed: %v", name, c.Problems())
		}
	}
	cm := operatorObject(f, "ConfigMap", names.ChildConfigMap("near"))
	if cm == nil {
		t.Fatal("no child ConfigMap for near")
	}
	if got, _, _ := unstructured.NestedString(cm.Object, "data", "write_logs_endpoint"); got != "https://vmauth.r1.example.com/vli/insert/opentelemetry/v1/logs" {
		t.Errorf("near writes logs to %s", got)
	}
	if operatorObject(f, "ConfigMap", names.ChildConfigMap("far")) != nil {
		t.Errorf("far got a child ConfigMap without a regional cluster")
	}
}

// A child whose label names a missing regional cluster fails alone with the regional clusters to choose from, and
// each of its services' layer-2 failures names the operator's problem as the cause (regression: they only said
// "ConfigMap kcm-system/kof-cluster-config-lost not found; create it or set optional: true").
func TestChildNamingMissingRegionalNamesTheCause(t *testing.T) {
	f := renderFleet(t, Options{Clusters: []*unstructured.Unstructured{
		clusterTemplate("aws-standalone"), regional("r1", "us-east-2"),
		child("lost", "us-east-2", map[string]string{"k0rdent.mirantis.com/kof-regional-cluster-name": "gone"}),
		child("near", "us-east-2", nil),
	}})
	lost := f.Cluster("lost")
	if lost == nil || !lost.Failed() {
		t.Fatalf("child lost naming a missing regional did not fail: %+v", lost)
	}
	want := "kof-operator: NoRegionalCluster: no regional cluster: regional cluster " + ns + "/gone named by label " +
		"k0rdent.mirantis.com/kof-regional-cluster-name not found; set it to one of the regional clusters [" + ns +
		"/r1] (and k0rdent.mirantis.com/kof-regional-cluster-namespace to its namespace), or remove it to bind by " +
		"cloud and location"
	if len(lost.Errors) != 1 || lost.Errors[0].Error() != want {
		t.Errorf("lost's errors = %v, want [%s]", lost.Errors, want)
	}
	cause := "(the kof-operator makes ConfigMap " + ns + "/" + names.ChildConfigMap("lost") + " and makes none of " +
		"this cluster's objects while it reports NoRegionalCluster: fix that first)"
	failed := 0
	for _, s := range lost.Services {
		if s.Err == nil {
			continue
		}
		failed++
		if !strings.HasSuffix(s.Err.Error(), cause) {
			t.Errorf("service %s: %v; want it to end with %q", s.Name, s.Err, cause)
		}
	}
	if failed == 0 {
		t.Errorf("no service of lost failed; want each to name the operator's problem")
	}
	// The summary names that cause once for all the services it blocks (regression: one line per service, eight
	// times the same hint), and the ERRORS column counts the lines it prints.
	var svcs []string
	for _, s := range lost.Services {
		svcs = append(svcs, s.Name)
	}
	wantProblems := []string{want, fmt.Sprintf("services %s (%d of %d): need ConfigMap %s/%s, which the "+
		"kof-operator does not make while it reports NoRegionalCluster (above): fix that first",
		strings.Join(svcs, ", "), failed, len(lost.Services), ns, names.ChildConfigMap("lost"))}
	if diff := cmp.Diff(wantProblems, lost.Problems()); diff != "" {
		t.Errorf("lost's problems (-want +got):\n%s", diff)
	}
	if failed != len(lost.Services) || lost.ErrorCount() != 2 {
		t.Errorf("%d of %d services failed, ErrorCount %d; want all to fail, counted as 2", failed,
			len(lost.Services), lost.ErrorCount())
	}
	if c := f.Cluster("near"); c == nil || c.Failed() {
		t.Errorf("cluster near failed: %v", c.Problems())
	}
}

func TestOfflineCredentials(t *testing.T) {
	f := renderFleet(t, Options{Clusters: []*unstructured.Unstructured{
		clusterTemplate("aws-standalone"), regional("r1", "us-east-2"), child("c1", "us-east-2", nil),
	}})
	base := names.ChildVMUserBase(ns, "c1")
	secret := operatorObject(f, "Secret", names.VMUserSecret(base))
	if secret == nil {
		t.Fatalf("no Secret %s", names.VMUserSecret(base))
	}
	for key, want := range map[string]string{"username": base, "password": OfflinePassword} {
		raw, _, _ := unstructured.NestedString(secret.Object, "data", key)
		got, err := base64.StdEncoding.DecodeString(raw)
		if err != nil || string(got) != want {
			t.Errorf("Secret key %s = %q (%v), want %q", key, got, err, want)
		}
	}
	if !strings.Contains(OfflinePassword, "placeholder") || len(OfflinePassword) < 16 {
		t.Errorf("OfflinePassword %q must say it is a placeholder and be at least 16 characters", OfflinePassword)
	}
	vmrules := operatorObject(f, "ConfigMap", names.VMRulesConfigMap("r1"))
	if vmrules == nil {
		t.Fatal("no vmrules ConfigMap for r1")
	}
	if v, _, _ := unstructured.NestedString(vmrules.Object, "data", "values"); !strings.HasPrefix(v, "vmrules:") {
		t.Errorf("vmrules values = %.80q, want YAML under vmrules:", v)
	}
}

func TestManagementObjectsReplaceOperator(t *testing.T) {
	objs := []*unstructured.Unstructured{clusterTemplate("aws-standalone"), regional("r1", "us-east-2"), child("c1", "us-east-2", nil)}
	computed := renderFleet(t, Options{Clusters: objs})
	var live []*unstructured.Unstructured
	for _, o := range computed.Operator {
		c := o.DeepCopy()
		if c.GetName() == names.ChildConfigMap("c1") {
			if err := unstructured.SetNestedField(c.Object, "https://live.example.com/write", "data", "write_metrics_endpoint"); err != nil {
				t.Fatal(err)
			}
		}
		live = append(live, c)
	}
	f := renderFleet(t, Options{Clusters: objs, ManagementObjects: live})
	s := f.Cluster("c1").Service("kof-collectors")
	if s == nil || s.Err != nil {
		t.Fatalf("c1 kof-collectors: %+v", s)
	}
	if got, _, _ := unstructured.NestedString(s.Values, "kof", "metrics", "endpoint"); got != "https://live.example.com/write" {
		t.Errorf("c1 metrics endpoint = %s, want the live ConfigMap's", got)
	}
	if f.Cluster("mgmt").Service(OperatorOutputs) != nil {
		t.Errorf("live management objects are shown as computed operator outputs")
	}
	if len(f.Operator) != len(live) {
		t.Errorf("Fleet.Operator holds %d objects, want the %d given", len(f.Operator), len(live))
	}
}

// Options.SveltosClusters shows provisioned clusters as SveltosClusters too (the fidelity test registers every
// cluster with Sveltos directly).
func TestSveltosClustersOptionShowsEverySveltosCluster(t *testing.T) {
	in, err := readInputs([]*unstructured.Unstructured{clusterTemplate("aws-standalone"), regional("r1", "us-east-2"),
		child("c1", "us-east-2", nil)}, true)
	if err != nil {
		t.Fatal(err)
	}
	for _, d := range in.deployments {
		if d.cluster.GetKind() != "SveltosCluster" || d.cluster.GetName() != d.name {
			t.Errorf("%s is shown as %s %s, want SveltosCluster %s", d.name, d.cluster.GetKind(), d.cluster.GetName(),
				d.name)
		}
	}
}

func TestAdoptedClusterIsSveltosCluster(t *testing.T) {
	cd := child("adopted", "us-east-2", map[string]string{"k0rdent.mirantis.com/kof-regional-cluster-name": "r1"})
	if err := unstructured.SetNestedField(cd.Object, "adopted-cluster-1-0-0", "spec", "template"); err != nil {
		t.Fatal(err)
	}
	in, err := readInputs([]*unstructured.Unstructured{cd, regional("r1", "us-east-2")}, false)
	if err != nil {
		t.Fatal(err)
	}
	for _, d := range in.deployments {
		want := "Cluster"
		if d.name == "adopted" {
			want = "SveltosCluster"
		}
		if d.cluster.GetKind() != want {
			t.Errorf("%s is shown as %s, want %s", d.name, d.cluster.GetKind(), want)
		}
	}
}

func TestDuplicateClusterDeployment(t *testing.T) {
	_, err := Render(context.Background(), Options{ChartsDir: chartsDir, Clusters: []*unstructured.Unstructured{
		regional("r1", "us-east-2"), regional("r1", "us-east-2"),
	}})
	if err == nil || !strings.Contains(err.Error(), "kcm-system/r1 given twice") {
		t.Errorf("error = %v, want one naming the duplicate", err)
	}
}

func TestWriteAndSummary(t *testing.T) {
	f := renderFleet(t, Options{Mode: sveltos.SinglePass, Clusters: []*unstructured.Unstructured{
		clusterTemplate("aws-standalone"), regional("r1", "us-east-2"), child("far", "eu-west-1", nil),
	}})
	dir := t.TempDir()
	if err := Write(dir, f); err != nil {
		t.Fatal(err)
	}
	for _, p := range []string{"r1/kof-storage/manifest.yaml", "r1/kof-storage/values.yaml", "r1/kof-storage/chart.yaml",
		"r1/cert-manager/chart.yaml", "mgmt/kof/manifest.yaml", "mgmt/" + OperatorOutputs + "/manifest.yaml", "far/errors.txt"} {
		if _, err := os.Stat(filepath.Join(dir, p)); err != nil {
			t.Errorf("missing %s: %v", p, err)
		}
	}
	ref, err := os.ReadFile(filepath.Join(dir, "r1", "cert-manager", "chart.yaml"))
	if err != nil || !strings.Contains(string(ref), "rendered: false") || !strings.Contains(string(ref), "repository: oci://") {
		t.Errorf("third-party reference:\n%s (%v)", ref, err)
	}
	var buf bytes.Buffer
	if err := Summary(&buf, f); err != nil {
		t.Fatal(err)
	}
	lines := strings.Split(buf.String(), "\n")
	if fields := strings.Fields(lines[0]); strings.Join(fields, " ") != "CLUSTER ROLE SERVICES OBJECTS ERRORS" {
		t.Errorf("summary header %q", lines[0])
	}
	row := map[string][]string{}
	for _, l := range lines[1:4] {
		fields := strings.Fields(l)
		row[fields[0]] = fields
	}
	if r := row["r1"]; len(r) != 5 || r[1] != "regional" || r[4] != "0" || r[3] != fmt.Sprint(f.Cluster("r1").ObjectCount()) {
		t.Errorf("r1 summary row %v", r)
	}
	if r := row["far"]; len(r) != 5 || r[1] != "child" || r[4] == "0" {
		t.Errorf("far summary row %v, want errors", r)
	}
	if !strings.Contains(buf.String(), "far: ") {
		t.Errorf("summary does not list far's problems:\n%s", buf.String())
	}
}

func TestLintOfMCSValues(t *testing.T) {
	mcs := &unstructured.Unstructured{Object: map[string]any{
		"apiVersion": "k0rdent.mirantis.com/v1beta1", "kind": "MultiClusterService",
		"metadata": map[string]any{"name": "user-mcs"},
		"spec": map[string]any{
			"clusterSelector": map[string]any{"matchLabels": map[string]any{"team": "none"}},
			"serviceSpec": map[string]any{"services": []any{map[string]any{
				"name": "app", "namespace": "app", "template": "app-1-0-0", "values": "replicas: {{ .Values.replicas }}\n",
			}}},
		},
	}}
	f := renderFleet(t, Options{Clusters: []*unstructured.Unstructured{mcs}})
	var mine []LintFinding
	for _, l := range f.Lint {
		if l.MCS == "user-mcs" {
			mine = append(mine, l)
		}
	}
	if len(mine) != 1 || mine[0].Service != "app" || mine[0].Rule != sveltos.RuleDataField || mine[0].Line != 1 {
		t.Fatalf("lint of user-mcs = %v, want one %s finding at line 1 of service app", mine, sveltos.RuleDataField)
	}
	var buf bytes.Buffer
	if err := Summary(&buf, f); err != nil {
		t.Fatal(err)
	}
	if want := "warning: MultiClusterService user-mcs service app: line 1: " + string(sveltos.RuleDataField); !strings.Contains(buf.String(), want) {
		t.Errorf("summary lacks %q:\n%s", want, buf.String())
	}
	if f.Failed() {
		t.Errorf("a lint warning failed the fleet: %v", f.Cluster("mgmt").Problems())
	}
}

// Regression: a written manifest showed each child's credentials Secret with its password (in a live render, the
// operator's generated one). Write keeps the Secret's keys and writes a digest for each value.
func TestWriteRedactsSecretData(t *testing.T) {
	f := renderFleet(t, Options{Mode: sveltos.SinglePass, Clusters: []*unstructured.Unstructured{
		clusterTemplate("aws-standalone"), regional("r1", "us-east-2"), child("c1", "us-east-2", nil),
	}})
	dir := t.TempDir()
	if err := Write(dir, f); err != nil {
		t.Fatal(err)
	}
	secrets := 0
	password := base64.StdEncoding.EncodeToString([]byte(OfflinePassword))
	err := filepath.WalkDir(dir, func(p string, d os.DirEntry, err error) error {
		if err != nil || d.Name() != ManifestFile {
			return err
		}
		data, err := os.ReadFile(p)
		if err != nil {
			return err
		}
		if strings.Contains(string(data), password) || strings.Contains(string(data), OfflinePassword) {
			t.Errorf("%s shows the credentials' password", p)
		}
		docs, err := manifest.ParseDocuments(p, data)
		if err != nil {
			return err
		}
		for _, o := range docs {
			if !manifest.IsSecret(o.Unstructured) {
				continue
			}
			for _, field := range []string{"data", "stringData"} {
				m, _, _ := unstructured.NestedMap(o.Object, field)
				for k, v := range m {
					if s, _ := v.(string); !strings.HasPrefix(s, "<redacted sha256:") {
						t.Errorf("%s: Secret %s %s.%s = %q, want a digest", p, o.GetName(), field, k, v)
					}
				}
			}
			if pw, ok, _ := unstructured.NestedString(o.Object, "data", "password"); ok {
				secrets++
				if want := manifest.Redacted(password); pw != want {
					t.Errorf("%s: Secret %s data.password = %q, want %q", p, o.GetName(), pw, want)
				}
			}
		}
		return nil
	})
	if err != nil {
		t.Fatal(err)
	}
	if secrets == 0 {
		t.Fatal("no credentials Secret written: the test did not render c1's credentials")
	}
}

// A v1 List, as `kubectl get clusterdeployments,clustertemplates -A -o yaml` prints it (docs/preview.md), stands
// for its items (regression: it was refused as an object without metadata.name).
func TestKubectlListInputIsItsItems(t *testing.T) {
	objs := []*unstructured.Unstructured{clusterTemplate("aws-standalone"), regional("r1", "us-east-2"),
		child("c1", "us-east-2", nil)}
	items := make([]any, 0, len(objs))
	for _, o := range objs {
		items = append(items, o.Object)
	}
	list := &unstructured.Unstructured{Object: map[string]any{"apiVersion": "v1", "kind": "List",
		"metadata": map[string]any{"resourceVersion": ""}, "items": items}}
	in, err := readInputs([]*unstructured.Unstructured{list}, false)
	if err != nil {
		t.Fatal(err)
	}
	var got []string
	for _, d := range in.deployments {
		got = append(got, d.key()+" "+d.role)
	}
	want := []string{"kcm-system/c1 " + RoleChild, "kcm-system/r1 " + RoleRegional}
	if strings.Join(got, ",") != strings.Join(want, ",") {
		t.Errorf("deployments: %q, want %q", got, want)
	}
	if len(in.templates) != 1 {
		t.Errorf("templates: %d, want 1", len(in.templates))
	}
	bad := &unstructured.Unstructured{Object: map[string]any{"apiVersion": "v1", "kind": "List", "items": []any{"x"}}}
	if _, err := readInputs([]*unstructured.Unstructured{bad}, false); err == nil ||
		!strings.Contains(err.Error(), "object 1 (v1 List): items[0] is not an object") {
		t.Errorf("a List with a non-object item: err = %v", err)
	}
}
