package harness

import (
	"context"
	"errors"
	"fmt"
	"os"
	"path/filepath"
	"strings"
	"testing"
	"time"

	kcmv1 "github.com/K0rdent/kcm/api/v1beta1"
	"github.com/google/go-cmp/cmp"
	appsv1 "k8s.io/api/apps/v1"
	corev1 "k8s.io/api/core/v1"
	apierrors "k8s.io/apimachinery/pkg/api/errors"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/apimachinery/pkg/apis/meta/v1/unstructured"
	"k8s.io/apimachinery/pkg/runtime/schema"
	"sigs.k8s.io/controller-runtime/pkg/client"
	"sigs.k8s.io/controller-runtime/pkg/client/fake"
	"sigs.k8s.io/controller-runtime/pkg/client/interceptor"

	"kof.dev/kof/chartlib/fleet"
)

func deployment(env []corev1.EnvVar, args ...string) *appsv1.Deployment {
	d := &appsv1.Deployment{ObjectMeta: metav1.ObjectMeta{Namespace: "kof", Name: "kof-mothership-operator"}}
	d.Spec.Template.Spec.Containers = []corev1.Container{{Name: "sidecar"}, {Name: "manager", Env: env, Args: args}}
	return d
}

func TestOperatorCommandAdaptsDeploymentToLocalProcess(t *testing.T) {
	dep := deployment([]corev1.EnvVar{
		{Name: "RELEASE_NAMESPACE", Value: "kof"},
		{Name: "POD_NAMESPACE", ValueFrom: &corev1.EnvVarSource{FieldRef: &corev1.ObjectFieldSelector{
			FieldPath: "metadata.namespace"}}},
	}, "--leader-elect=true", "--metrics-bind-address=:8080", "--health-probe-bind-address=:8081", "--zap-devel")
	env, args, err := OperatorCommand(dep)
	if err != nil {
		t.Fatal(err)
	}
	if diff := cmp.Diff([]string{"RELEASE_NAMESPACE=kof", "POD_NAMESPACE=kof"}, env); diff != "" {
		t.Errorf("env (-want +got):\n%s", diff)
	}
	wantArgs := []string{"--leader-elect=false", "--metrics-bind-address=0", "--health-probe-bind-address=0",
		"--zap-devel"}
	if diff := cmp.Diff(wantArgs, args); diff != "" {
		t.Errorf("args (-want +got):\n%s", diff)
	}
}

func TestOperatorCommandRejectsSecretEnv(t *testing.T) {
	dep := deployment([]corev1.EnvVar{{Name: "TOKEN", ValueFrom: &corev1.EnvVarSource{
		SecretKeyRef: &corev1.SecretKeySelector{Key: "t"}}}})
	_, _, err := OperatorCommand(dep)
	if err == nil || !strings.Contains(err.Error(), "TOKEN") {
		t.Fatalf("error = %v, want one naming TOKEN", err)
	}
	dep.Spec.Template.Spec.Containers = dep.Spec.Template.Spec.Containers[:1]
	if _, _, err := OperatorCommand(dep); err == nil || !strings.Contains(err.Error(), `"manager"`) {
		t.Fatalf("error = %v, want one naming the missing container", err)
	}
}

func TestLoadScenarioUsesStandardClustersTemplatesFirst(t *testing.T) {
	sc, err := LoadScenario("testdata/scenarios", "01-basic")
	if err != nil {
		t.Fatal(err)
	}
	if sc.Namespace != nil {
		t.Errorf("Namespace = %v, want nil without namespace.yaml", sc.Namespace)
	}
	if want := filepath.Join("testdata/scenarios", StandardClustersFile); sc.ClustersFile != want {
		t.Errorf("ClustersFile = %q, want %q", sc.ClustersFile, want)
	}
	var kinds []string
	for _, o := range sc.Clusters {
		kinds = append(kinds, o.GetKind()+"/"+o.GetName())
	}
	want := []string{"ClusterTemplate/aws-standalone-cp-1-0-0", "ClusterDeployment/regional-1"}
	if diff := cmp.Diff(want, kinds); diff != "" {
		t.Errorf("clusters (-want +got):\n%s", diff)
	}
}

func TestLoadScenarioReadsOwnClustersAndNamespace(t *testing.T) {
	sc, err := LoadScenario("testdata/scenarios", "02-own-clusters")
	if err != nil {
		t.Fatal(err)
	}
	if got := sc.Namespace.GetLabels()["istio-injection"]; got != "enabled" {
		t.Errorf("namespace label istio-injection = %q, want enabled", got)
	}
	if len(sc.Clusters) != 1 || sc.Clusters[0].GetNamespace() != "team-a" {
		t.Errorf("clusters = %v, want child-a in team-a", sc.Clusters)
	}
}

func TestLoadScenarioErrors(t *testing.T) {
	for name, want := range map[string]string{
		"99-missing":     "99-missing",
		"03-no-clusters": "holds no ClusterDeployment",
	} {
		_, err := LoadScenario("testdata/scenarios", name)
		if err == nil || !strings.Contains(err.Error(), want) {
			t.Errorf("LoadScenario(%s) error = %v, want one containing %q", name, err, want)
		}
	}
}

func configMap(ns, name string, labels, data map[string]string) *unstructured.Unstructured {
	u := &unstructured.Unstructured{Object: map[string]any{"apiVersion": "v1", "kind": "ConfigMap"}}
	u.SetNamespace(ns)
	u.SetName(name)
	u.SetLabels(labels)
	d := map[string]any{}
	for k, v := range data {
		d[k] = v
	}
	u.Object["data"] = d
	return u
}

func TestSummarizeShowsEndpointsAndMissingObjects(t *testing.T) {
	regional := map[string]string{
		"write_metrics_endpoint": "https://vmauth.r1.example.com/vm/insert/0/prometheus/api/v1/write",
		"read_metrics_endpoint":  "https://vmauth.r1.example.com/vm/select/0/prometheus",
		"write_logs_endpoint":    "https://vmauth.r1.example.com/vli/insert/opentelemetry/v1/logs",
	}
	child := map[string]string{
		"write_metrics_endpoint": "https://vmauth.custom.example.com/vm/insert/0/prometheus/api/v1/write",
		"write_logs_endpoint":    "https://vmauth.r1.example.com/vli/insert/opentelemetry/v1/logs",
	}
	ops := []*unstructured.Unstructured{
		configMap("kcm-system", "kof-r1", nil, regional),
		configMap("kcm-system", "kof-cluster-config-c1", nil, child),
	}
	f := &fleet.Fleet{Clusters: []*fleet.Cluster{
		{Name: "mgmt", Namespace: "mgmt", Dir: "mgmt", Role: fleet.RoleManagement},
		{Name: "r1", Namespace: "kcm-system", Dir: "r1", Role: fleet.RoleRegional,
			Services: []*fleet.Service{{Name: "kof-storage"}, {Name: "kof-collectors"}}},
		{Name: "c1", Namespace: "kcm-system", Dir: "c1", Role: fleet.RoleChild},
	}}
	waited := []Expected{
		{Cluster: "c1", Kind: "ConfigMap", Namespace: "kcm-system", Name: "kof-cluster-config-c1", Found: true},
		{Cluster: "c1", Kind: "Secret", Namespace: "kcm-system", Name: "kof-vmuser-creds-c1-x"},
	}
	got := Summarize(f, ops, waited)
	want := []Row{
		{Cluster: "mgmt", Role: fleet.RoleManagement},
		{Cluster: "r1", Role: fleet.RoleRegional, Endpoints: []string{"https://vmauth.r1.example.com"},
			Services: []string{"kof-storage", "kof-collectors"}},
		{Cluster: "c1", Role: fleet.RoleChild,
			Endpoints: []string{"https://vmauth.custom.example.com", "https://vmauth.r1.example.com"},
			Problems:  []string{"kof-operator made no Secret kcm-system/kof-vmuser-creds-c1-x"}},
	}
	if diff := cmp.Diff(want, got); diff != "" {
		t.Errorf("rows (-want +got):\n%s", diff)
	}
	got[2].KCM = "no services reported (0 ServiceSets); not ready: no Credential"
	var b strings.Builder
	if err := WriteTable(&b, got); err != nil {
		t.Fatal(err)
	}
	text := b.String()
	for _, s := range []string{"CLUSTER", "r1", "https://vmauth.r1.example.com", "kof-storage,kof-collectors",
		"c1: kof-operator made no Secret", "c1: KCM: no services reported (0 ServiceSets); not ready: no Credential"} {
		if !strings.Contains(text, s) {
			t.Errorf("table lacks %q:\n%s", s, text)
		}
	}
}

func TestCRDDirsNamesMissingThirdPartyCRDs(t *testing.T) {
	root := t.TempDir()
	if err := os.MkdirAll(filepath.Join(root, "operator", "config", "crd", "bases"), 0o755); err != nil {
		t.Fatal(err)
	}
	_, err := CRDDirs(root)
	if err == nil || !strings.Contains(err.Error(), "make crds") {
		t.Fatalf("error = %v, want the `make crds` fix", err)
	}
	if err := os.MkdirAll(filepath.Join(root, "bin", "crds", "b"), 0o755); err != nil {
		t.Fatal(err)
	}
	if err := os.MkdirAll(filepath.Join(root, "bin", "crds", "a"), 0o755); err != nil {
		t.Fatal(err)
	}
	got, err := CRDDirs(root)
	if err != nil {
		t.Fatal(err)
	}
	want := []string{filepath.Join(root, "operator", "config", "crd", "bases"), filepath.Join(root, "bin", "crds", "a"),
		filepath.Join(root, "bin", "crds", "b")}
	if diff := cmp.Diff(want, got); diff != "" {
		t.Errorf("dirs (-want +got):\n%s", diff)
	}
}

func TestCompleteClusterTemplateFillsOnlyMissingRequiredFields(t *testing.T) {
	sc, err := LoadScenario("testdata/scenarios", "01-basic")
	if err != nil {
		t.Fatal(err)
	}
	tpl := sc.Clusters[0]
	filled := CompleteClusterTemplate(tpl)
	if diff := cmp.Diff([]string{"spec.helm.chartSpec.sourceRef", "spec.helm.chartSpec.interval"}, filled); diff != "" {
		t.Errorf("filled (-want +got):\n%s", diff)
	}
	spec, _, _ := unstructured.NestedMap(tpl.Object, "spec", "helm", "chartSpec")
	want := map[string]any{"chart": "aws-standalone-cp", "version": "1.0.0", "interval": "10m",
		"sourceRef": map[string]any{"kind": "HelmRepository", "name": "kcm-templates"}}
	if diff := cmp.Diff(want, spec); diff != "" {
		t.Errorf("chartSpec (-want +got):\n%s", diff)
	}
	if again := CompleteClusterTemplate(tpl); len(again) != 0 {
		t.Errorf("second call filled %v, want nothing", again)
	}
	if got := CompleteClusterTemplate(sc.Clusters[1]); got != nil {
		t.Errorf("ClusterDeployment filled %v, want nil", got)
	}
}

// A controller that changes an object between CreateStrict's create and its status write (KCM's template
// controllers label every template they see) must not fail the write: the status lands on the object as it is
// now, the controller's change kept.
func TestCreateStrictWritesStatusAfterAConflict(t *testing.T) {
	ctx := context.Background()
	tpl := &unstructured.Unstructured{Object: map[string]any{
		"apiVersion": kcmAPIVersion, "kind": KindClusterTemplate,
		"metadata": map[string]any{"name": "aws-standalone-cp-1-0-0", "namespace": KCMNamespace},
		"spec":     map[string]any{"helm": map[string]any{"chartSpec": map[string]any{"chart": "aws"}}},
		"status":   map[string]any{"valid": true, "providers": []any{"infrastructure-aws"}},
	}}
	conflicts := 0
	c := fake.NewClientBuilder().WithStatusSubresource(tpl).WithInterceptorFuncs(interceptor.Funcs{
		SubResourceUpdate: func(ctx context.Context, c client.Client, sub string, obj client.Object,
			opts ...client.SubResourceUpdateOption) error {
			if conflicts == 0 { // the controller's write lands first; the API server refuses the stale status write
				conflicts++
				live := &unstructured.Unstructured{}
				live.SetGroupVersionKind(obj.GetObjectKind().GroupVersionKind())
				if err := c.Get(ctx, client.ObjectKeyFromObject(obj), live); err != nil {
					return err
				}
				live.SetLabels(map[string]string{"k0rdent.mirantis.com/component": "kcm"})
				if err := c.Update(ctx, live); err != nil {
					return err
				}
				return apierrors.NewConflict(schema.GroupResource{Group: "k0rdent.mirantis.com",
					Resource: "clustertemplates"}, obj.GetName(), errors.New("the object has been modified"))
			}
			return c.SubResource(sub).Update(ctx, obj, opts...)
		},
	}).Build()
	if err := CreateStrict(ctx, c, tpl); err != nil {
		t.Fatal(err)
	}
	got := &unstructured.Unstructured{}
	got.SetGroupVersionKind(tpl.GroupVersionKind())
	if err := c.Get(ctx, client.ObjectKeyFromObject(tpl), got); err != nil {
		t.Fatal(err)
	}
	providers, _, _ := unstructured.NestedStringSlice(got.Object, "status", "providers")
	if conflicts != 1 || !cmp.Equal(providers, []string{"infrastructure-aws"}) ||
		got.GetLabels()["k0rdent.mirantis.com/component"] != "kcm" {
		t.Errorf("after %d conflicts: status.providers %v, labels %v; want the status written and the label kept",
			conflicts, providers, got.GetLabels())
	}
}

// An object that exists already and that a controller writes between CreateStrict's read and its update (KCM writes
// the MultiClusterServices a fidelity scenario creates twice) is read and updated again: regression for `create
// MultiClusterService ...: the object has been modified` of tests/fidelity on a busy machine.
func TestCreateStrictUpdatesAfterAConflict(t *testing.T) {
	ctx := context.Background()
	mcs := func(svc string) *unstructured.Unstructured {
		return &unstructured.Unstructured{Object: map[string]any{
			"apiVersion": kcmAPIVersion, "kind": "MultiClusterService",
			"metadata": map[string]any{"name": "kof-vmuser-propagation-child-2"},
			"spec":     map[string]any{"serviceSpec": map[string]any{"services": []any{map[string]any{"name": svc}}}},
		}}
	}
	conflicts := 0
	c := fake.NewClientBuilder().WithObjects(mcs("old")).WithInterceptorFuncs(interceptor.Funcs{
		Update: func(ctx context.Context, c client.WithWatch, obj client.Object, opts ...client.UpdateOption) error {
			if conflicts == 0 { // the controller's write lands between the read and this update
				conflicts++
				live := &unstructured.Unstructured{}
				live.SetGroupVersionKind(obj.GetObjectKind().GroupVersionKind())
				if err := c.Get(ctx, client.ObjectKeyFromObject(obj), live); err != nil {
					return err
				}
				live.SetFinalizers([]string{"k0rdent.mirantis.com/multicluster-service"})
				if err := c.Update(ctx, live); err != nil {
					return err
				}
			}
			return c.Update(ctx, obj, opts...)
		},
	}).Build()
	if err := CreateStrict(ctx, c, mcs("new")); err != nil {
		t.Fatalf("after %d conflicts: %v", conflicts, err)
	}
	got := &unstructured.Unstructured{}
	got.SetGroupVersionKind(mcs("").GroupVersionKind())
	if err := c.Get(ctx, client.ObjectKeyFromObject(mcs("")), got); err != nil {
		t.Fatal(err)
	}
	services, _, _ := unstructured.NestedSlice(got.Object, "spec", "serviceSpec", "services")
	if conflicts != 1 || !cmp.Equal(services, []any{map[string]any{"name": "new"}}) {
		t.Errorf("after %d conflicts: spec.serviceSpec.services %v; want the update written", conflicts, services)
	}
}

// The demo's output folder is prepared before anything starts, so the logs it names (under LogsFolder) are still
// there after the run (regression: the progress lines named logs in the work folder, which a finished run removes).
// An earlier demo output is emptied; a folder the demo did not write keeps its files.
func TestPrepareOutKeepsOnlyTheNewRun(t *testing.T) {
	out := filepath.Join(t.TempDir(), "out")
	if err := prepareOut(out); err != nil {
		t.Fatal(err)
	}
	old := filepath.Join(out, LogsFolder, "kof-operator-01-regional-child-1.log")
	if err := os.MkdirAll(filepath.Dir(old), 0o755); err != nil {
		t.Fatal(err)
	}
	if err := os.WriteFile(old, []byte("old run\n"), 0o644); err != nil {
		t.Fatal(err)
	}
	if err := prepareOut(out); err != nil {
		t.Fatal(err)
	}
	if _, err := os.Stat(old); !os.IsNotExist(err) {
		t.Errorf("%s of the earlier run is still there (err %v)", old, err)
	}
	if _, err := os.Stat(filepath.Join(out, outMarker)); err != nil {
		t.Errorf("no marker after prepareOut: %v", err)
	}
	mine := t.TempDir()
	keep := filepath.Join(mine, "notes.txt")
	if err := os.WriteFile(keep, []byte("mine\n"), 0o644); err != nil {
		t.Fatal(err)
	}
	if err := prepareOut(mine); err != nil {
		t.Fatal(err)
	}
	if _, err := os.Stat(keep); err != nil {
		t.Errorf("a folder the demo did not write lost %s: %v", keep, err)
	}
	if strings.Contains(LogsFolder, "-") || strings.ToLower(LogsFolder) != LogsFolder || !strings.HasPrefix(LogsFolder, "_") {
		t.Errorf("LogsFolder %q could be a cluster's folder name", LogsFolder)
	}
}

// KCMReleaseCheck names a KOF HelmRelease that is gone and every ComponentRemoved event on KCM's Management, and
// passes when every release is there and KCM removed nothing.
func TestKCMReleaseCheckNamesRemovedReleases(t *testing.T) {
	hr := func(ns, name string) *unstructured.Unstructured {
		u := &unstructured.Unstructured{}
		u.SetGroupVersionKind(helmReleaseGVK)
		u.SetNamespace(ns)
		u.SetName(name)
		return u
	}
	removed := &corev1.Event{ObjectMeta: metav1.ObjectMeta{Namespace: "default", Name: "kcm.1"},
		Reason: "ComponentRemoved", Message: "The kof-regional component was removed: removing HelmRelease",
		InvolvedObject: corev1.ObjectReference{Kind: "Management", Name: "kcm"}}
	other := &corev1.Event{ObjectMeta: metav1.ObjectMeta{Namespace: "default", Name: "kcm.2"},
		Reason: "ComponentRemoved", InvolvedObject: corev1.ObjectReference{Kind: "Region", Name: "r"}}
	ctx := context.Background()
	c := fake.NewClientBuilder().WithObjects(hr("kof", "kof-mothership"), hr("kof", "kof-child"), other).Build()
	if err := KCMReleaseCheck(ctx, c, []string{"kof/kof-mothership", "kof/kof-child"}); err != nil {
		t.Errorf("every release there, no removal on the Management: %v", err)
	}
	c = fake.NewClientBuilder().WithObjects(hr("kof", "kof-mothership"), removed, other).Build()
	err := KCMReleaseCheck(ctx, c, []string{"kof/kof-mothership", "kof/kof-regional"})
	if err == nil {
		t.Fatal("a release gone and a ComponentRemoved event: no error")
	}
	for _, want := range []string{"HelmRelease kof/kof-regional", "ComponentRemoved: The kof-regional component was removed"} {
		if !strings.Contains(err.Error(), want) {
			t.Errorf("error %q lacks %q", err, want)
		}
	}
	if strings.Contains(err.Error(), "kof-mothership") {
		t.Errorf("error %q names kof-mothership, which is there", err)
	}
}

// KCMClusterState counts the services KCM reports by state, and without services says so with the cluster's
// Ready condition when it is not True.
func TestKCMClusterState(t *testing.T) {
	services := []kcmv1.ServiceState{{Name: "a", State: "Provisioning"}, {Name: "b", State: "Deployed"},
		{Name: "c", State: "Deployed"}}
	if got, want := KCMClusterState(services, 1, nil), "2 Deployed, 1 Provisioning"; got != want {
		t.Errorf("services: %q, want %q", got, want)
	}
	notReady := &metav1.Condition{Type: "Ready", Status: metav1.ConditionFalse,
		Message: "failed to get Credential kcm-system/cred\nmore"}
	if got, want := KCMClusterState(nil, 0, notReady),
		"no services reported (0 ServiceSets); not ready: failed to get Credential kcm-system/cred"; got != want {
		t.Errorf("not ready: %q, want %q", got, want)
	}
	ready := &metav1.Condition{Type: "Ready", Status: metav1.ConditionTrue}
	if got, want := KCMClusterState(nil, 2, ready), "no services reported (2 ServiceSets)"; got != want {
		t.Errorf("ready: %q, want %q", got, want)
	}
	r := &KCMReport{Templates: []TemplateState{
		{Kind: "ServiceTemplate", Name: "kof-storage-2-0-0", Judged: true, Valid: true},
		{Kind: "ServiceTemplate", Name: "cert-manager-v1-19-1", Judged: true, Error: "failed to download"},
		{Kind: "ServiceTemplateChain", Name: "kof-storage-2-0-0", Judged: true, Valid: true}}}
	if got, want := r.TemplateSummary(), "1 of 2 ServiceTemplates valid (invalid: cert-manager-v1-19-1); "+
		"1 of 1 ServiceTemplateChains valid"; got != want {
		t.Errorf("TemplateSummary: %q, want %q", got, want)
	}
}

// TestInstallCRDsRetriesAPIServerTimeouts checks that the node's CRD install is repeated while the API server answers
// with a timeout (as envtest wraps it), and only then: another error, or a timeout past the deadline, is returned.
func TestInstallCRDsRetriesAPIServerTimeouts(t *testing.T) {
	timeout := fmt.Errorf("unable to create CRD instances: %w", fmt.Errorf("unable to create CRD %q: %w", "vmagents.operator.victoriametrics.com",
		apierrors.NewTimeoutError("request did not complete within requested timeout - context deadline exceeded", 0)))
	invalid := fmt.Errorf("unable to create CRD instances: %w", apierrors.NewBadRequest("spec.versions: Required value"))
	for _, tc := range []struct {
		name      string
		errs      []error // what each install returns; nil is success
		deadline  time.Duration
		wantCalls int
		wantErr   error
	}{
		{"two timeouts, then served", []error{timeout, timeout, nil}, time.Minute, 3, nil},
		{"another error", []error{invalid, nil}, time.Minute, 1, invalid},
		{"a timeout past the deadline", []error{timeout, nil}, -time.Second, 1, timeout},
	} {
		t.Run(tc.name, func(t *testing.T) {
			calls, retries := 0, 0
			n, err := installCRDs(func() (int, error) {
				calls++
				return 14, tc.errs[calls-1]
			}, time.Now().Add(tc.deadline), func(string, ...any) { retries++ })
			if calls != tc.wantCalls || retries != tc.wantCalls-1 || !errors.Is(err, tc.wantErr) || (err == nil && n != 14) {
				t.Errorf("installCRDs: %d calls, %d retries logged, %d CRDs, error %v; want %d calls, %d retries, error %v",
					calls, retries, n, err, tc.wantCalls, tc.wantCalls-1, tc.wantErr)
			}
		})
	}
}
