package sveltos

import (
	"strings"
	"testing"

	"github.com/google/go-cmp/cmp"
)

func TestClusterFromDeployment(t *testing.T) {
	ownership := func(name string) (map[string]string, map[string]string) {
		return map[string]string{"app.kubernetes.io/managed-by": "Helm",
				"helm.toolkit.fluxcd.io/name": name, "helm.toolkit.fluxcd.io/namespace": "kcm-system"},
			map[string]string{"meta.helm.sh/release-name": name, "meta.helm.sh/release-namespace": "kcm-system"}
	}
	cases := []struct {
		name, cd        string
		kind            ClusterKind
		wantAPIVersion  string
		wantLabels      map[string]string
		wantAnnotations map[string]string
	}{
		{
			name: "labels default to the deployment's, metadata annotations stay behind",
			cd: `
apiVersion: k0rdent.mirantis.com/v1beta1
kind: ClusterDeployment
metadata:
  name: child-1
  namespace: kcm-system
  labels: {k0rdent.mirantis.com/kof-cluster-role: child}
  annotations: {k0rdent.mirantis.com/kof-collectors-values: "{}"}
spec:
  config:
    clusterAnnotations: {k0rdent.mirantis.com/kof-regional-domain: r.example.com}
`,
			kind: KindCAPI, wantAPIVersion: "cluster.x-k8s.io/v1beta2",
			wantLabels:      map[string]string{"k0rdent.mirantis.com/kof-cluster-role": "child"},
			wantAnnotations: map[string]string{"k0rdent.mirantis.com/kof-regional-domain": "r.example.com"},
		},
		{
			name: "clusterLabels replace the deployment's labels",
			cd: `
apiVersion: k0rdent.mirantis.com/v1beta1
kind: ClusterDeployment
metadata:
  name: adopted
  namespace: kcm-system
  labels: {k0rdent.mirantis.com/kof-cluster-role: child}
spec:
  config:
    clusterLabels: {team: a}
`,
			kind: KindSveltos, wantAPIVersion: "lib.projectsveltos.io/v1beta1",
			wantLabels: map[string]string{"team": "a"},
		},
	}
	for _, tc := range cases {
		t.Run(tc.name, func(t *testing.T) {
			cd := obj(t, tc.cd)
			got, err := ClusterFromDeployment(cd, tc.kind)
			if err != nil {
				t.Fatal(err)
			}
			labels, annotations := ownership(cd.GetName())
			for k, v := range tc.wantLabels {
				labels[k] = v
			}
			for k, v := range tc.wantAnnotations {
				annotations[k] = v
			}
			if got.GetAPIVersion() != tc.wantAPIVersion || got.GetName() != cd.GetName() || got.GetNamespace() != "kcm-system" {
				t.Errorf("object %s %s/%s", got.GetAPIVersion(), got.GetNamespace(), got.GetName())
			}
			if diff := cmp.Diff(labels, got.GetLabels()); diff != "" {
				t.Errorf("labels (-want +got):\n%s", diff)
			}
			if diff := cmp.Diff(annotations, got.GetAnnotations()); diff != "" {
				t.Errorf("annotations (-want +got):\n%s", diff)
			}
		})
	}
}

func TestClusterFromDeploymentErrors(t *testing.T) {
	cases := map[string]string{
		`
apiVersion: v1
kind: ConfigMap
metadata: {name: x, namespace: kcm-system}
`: "not a k0rdent.mirantis.com ClusterDeployment",
		`
apiVersion: k0rdent.mirantis.com/v1beta1
kind: ClusterDeployment
metadata: {name: x, namespace: kcm-system}
spec: {config: {clusterAnnotations: {a: 1}}}
`: "ClusterDeployment kcm-system/x: spec.config.clusterAnnotations",
	}
	for text, want := range cases {
		if _, err := ClusterFromDeployment(obj(t, text), KindCAPI); err == nil || !strings.Contains(err.Error(), want) {
			t.Errorf("error %v, want %q", err, want)
		}
	}
	if _, err := ClusterFromDeployment(nil, KindCAPI); err == nil {
		t.Error("nil deployment accepted")
	}
}

func TestManagementCluster(t *testing.T) {
	labels := map[string]string{"k0rdent.mirantis.com/management-cluster": "true"}
	got := ManagementCluster(labels)
	labels["changed"] = "later"
	if got.GetKind() != "SveltosCluster" || got.GetNamespace() != "mgmt" || got.GetName() != "mgmt" {
		t.Errorf("management cluster %s %s/%s", got.GetKind(), got.GetNamespace(), got.GetName())
	}
	if diff := cmp.Diff(map[string]string{"k0rdent.mirantis.com/management-cluster": "true"}, got.GetLabels()); diff != "" {
		t.Errorf("labels (-want +got):\n%s", diff)
	}
	res := mustInstantiate(t, Input{Profile: "kof-mgmt-cluster", Service: "kof-storage", Cluster: got,
		Values: "self: {{ .Cluster.metadata.name }}\n"})
	if res.Values["self"] != "mgmt" {
		t.Errorf("values %v", res.Values)
	}
}
