package sveltos

import (
	"testing"

	corev1 "k8s.io/api/core/v1"
	"k8s.io/apimachinery/pkg/apis/meta/v1/unstructured"
	"sigs.k8s.io/yaml"
)

// obj parses one YAML object for a test.
func obj(t testing.TB, text string) *unstructured.Unstructured {
	t.Helper()
	m := map[string]any{}
	if err := yaml.Unmarshal([]byte(text), &m); err != nil {
		t.Fatalf("fixture: %v", err)
	}
	return &unstructured.Unstructured{Object: m}
}

// childCluster is a CAPI Cluster with labels and one annotation.
func childCluster(t testing.TB) *unstructured.Unstructured {
	return obj(t, `
apiVersion: cluster.x-k8s.io/v1beta2
kind: Cluster
metadata:
  name: child-1
  namespace: kcm-system
  labels:
    k0rdent.mirantis.com/kof-cluster-role: child
  annotations:
    k0rdent.mirantis.com/kof-regional-domain: regional-1.kof.example.com
spec:
  infrastructureRef:
    apiGroup: infrastructure.cluster.x-k8s.io
    kind: AWSCluster
    name: child-1
`)
}

// bareCluster is a SveltosCluster without labels or annotations.
func bareCluster(t testing.TB) *unstructured.Unstructured {
	return obj(t, `
apiVersion: lib.projectsveltos.io/v1beta1
kind: SveltosCluster
metadata:
  name: adopted
  namespace: kcm-system
`)
}

// childConfig is the operator's child ConfigMap for child-1.
func childConfig(t testing.TB) *unstructured.Unstructured {
	return obj(t, `
apiVersion: v1
kind: ConfigMap
metadata:
  name: kof-cluster-config-child-1
  namespace: kcm-system
  resourceVersion: "42"
  uid: 0b6f7c1e-0000-4000-8000-000000000001
  managedFields:
  - manager: kof-operator
    operation: Apply
data:
  regional_cluster_name: regional-1
  write_metrics_endpoint: https://vmauth.regional-1.kof.example.com/vm/insert/0/prometheus/api/v1/write
status:
  phase: whatever
`)
}

// vmuserSecret is a Secret written with stringData, as a YAML file would hold it.
func vmuserSecret(t testing.TB) *unstructured.Unstructured {
	return obj(t, `
apiVersion: v1
kind: Secret
metadata:
  name: kof-vmuser-creds-child-1
  namespace: kcm-system
stringData:
  username: child-1
  password: s3cr3t-s3cr3t-s3cr3t
`)
}

// awsCluster is the infrastructure object child-1 references.
func awsCluster(t testing.TB) *unstructured.Unstructured {
	return obj(t, `
apiVersion: infrastructure.cluster.x-k8s.io/v1beta2
kind: AWSCluster
metadata:
  name: child-1
  namespace: kcm-system
spec:
  region: us-east-2
`)
}

// childConfigRef references childConfig by a templated name.
func childConfigRef() TemplateResourceRef {
	return TemplateResourceRef{
		Identifier: "ChildConfig",
		Resource:   corev1.ObjectReference{APIVersion: "v1", Kind: "ConfigMap", Name: "kof-cluster-config-{{ .ClusterName }}"},
	}
}

// input is a child-1 input with the child ConfigMap referenced.
func input(t testing.TB, values string, mode Mode) Input {
	return Input{
		Profile: "kof-child-cluster", Service: "kof-collectors", ServiceNamespace: "kof",
		Cluster: childCluster(t), Values: values, Mode: mode,
		TemplateResourceRefs: []TemplateResourceRef{childConfigRef()},
		Objects:              []*unstructured.Unstructured{childConfig(t), vmuserSecret(t), awsCluster(t)},
	}
}

// modes lists both modes.
func modes() []Mode { return []Mode{DoublePass, SinglePass} }
