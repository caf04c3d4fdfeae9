package fleet

import (
	"fmt"

	monitoringv1 "github.com/prometheus-operator/prometheus-operator/pkg/apis/monitoring/v1"
	corev1 "k8s.io/api/core/v1"
	"k8s.io/apimachinery/pkg/apis/meta/v1/unstructured"
	"k8s.io/apimachinery/pkg/runtime"
	"sigs.k8s.io/controller-runtime/pkg/client"

	"kof.dev/kof/operator/config"
	"kof.dev/kof/operator/outputs"
	"kof.dev/kof/operator/ownership"
)

// OfflinePassword is the password of every VMUser credentials Secret the fleet renderer makes: the operator draws a
// random one on a live cluster; offline renders must be deterministic and never look like real credentials.
const OfflinePassword = "offline-placeholder-not-a-real-password"

// operatorOutputs returns what the KOF operator writes for the inputs, computed by the operator's own definition
// (operator/outputs.Compute) from the environment the charts give the kof-operator Deployment, the
// ClusterDeployments and ClusterTemplates of in, and the PrometheusRules and ConfigMaps among the management
// cluster's objects and in. Problems are returned per ClusterDeployment `namespace/name`, each as the operator
// reports it (reason and message); the error is for an operator environment the operator itself would refuse.
// Without a kof-operator Deployment no outputs are made. Source: docs/contract.md ("Objects the operator writes").
func operatorOutputs(m *management, in *inputs) ([]*unstructured.Unstructured, map[string][]error, error) {
	env := operatorEnv(m.objects)
	if env == nil {
		return nil, nil, nil
	}
	cfg, err := config.Load(func(k string) string { return env[k] })
	if err != nil {
		return nil, nil, fmt.Errorf("kof-operator environment rendered by kof-mothership: %w", err)
	}
	oin := outputs.Input{Config: cfg, ClusterTemplates: in.templates, Password: OfflinePassword}
	for _, d := range in.deployments {
		if d.typed != nil {
			oin.ClusterDeployments = append(oin.ClusterDeployments, *d.typed)
		}
	}
	all := append(append([]*unstructured.Unstructured{}, m.objects...), in.objects...)
	for _, o := range all {
		switch {
		case o.GetKind() == "PrometheusRule":
			var pr monitoringv1.PrometheusRule
			if err := fromUnstructured(o, &pr); err != nil {
				return nil, nil, err
			}
			oin.PrometheusRules = append(oin.PrometheusRules, pr)
		case o.GetKind() == "ConfigMap" && o.GetAPIVersion() == "v1":
			var cm corev1.ConfigMap
			if err := fromUnstructured(o, &cm); err != nil {
				return nil, nil, err
			}
			oin.ConfigMaps = append(oin.ConfigMaps, cm)
		}
	}
	out := outputs.Compute(oin)
	objs := make([]*unstructured.Unstructured, 0, len(out.Objects))
	for _, o := range out.Objects {
		u, err := toUnstructured(o.Object)
		if err != nil {
			return nil, nil, err
		}
		objs = append(objs, u)
	}
	errs := map[string][]error{}
	for key, ps := range out.Problems {
		for _, p := range ps {
			errs[key] = append(errs[key], &OperatorError{Reason: p.Reason, Message: p.Error()})
		}
	}
	return objs, errs, nil
}

// OperatorError is a problem the KOF operator reports for one cluster (operator/outputs.Compute): it makes none of
// that cluster's objects until the problem is fixed.
type OperatorError struct {
	// Reason is the operator's event reason (e.g. NoRegionalCluster, InvalidAnnotation); Message says what and the fix.
	Reason, Message string
}

// Error formats the problem as `kof-operator: <reason>: <message>`.
func (e *OperatorError) Error() string { return "kof-operator: " + e.Reason + ": " + e.Message }

// toUnstructured returns o as the operator applies it: its JSON form without status and creationTimestamp, nil
// values and empty maps (operator/ownership.Prune).
func toUnstructured(o client.Object) (*unstructured.Unstructured, error) {
	m, err := runtime.DefaultUnstructuredConverter.ToUnstructured(o)
	if err != nil {
		return nil, fmt.Errorf("encode %T %s/%s: %w", o, o.GetNamespace(), o.GetName(), err)
	}
	delete(m, "status")
	if md, ok := m["metadata"].(map[string]any); ok {
		delete(md, "creationTimestamp")
	}
	ownership.Prune(m)
	return &unstructured.Unstructured{Object: m}, nil
}

// operatorEnv returns the environment of the kof-operator container: the first container of a rendered Deployment
// whose env sets RELEASE_NAMESPACE and KOF_VERSION; nil when there is none.
func operatorEnv(objs []*unstructured.Unstructured) map[string]string {
	for _, obj := range objs {
		if obj.GetKind() != "Deployment" {
			continue
		}
		containers, _, _ := unstructured.NestedSlice(obj.Object, "spec", "template", "spec", "containers")
		for _, c := range containers {
			cm, _ := c.(map[string]any)
			env := map[string]string{}
			list, _, _ := unstructured.NestedSlice(cm, "env")
			for _, e := range list {
				kv, _ := e.(map[string]any)
				name, _ := kv["name"].(string)
				value, _ := kv["value"].(string)
				env[name] = value
			}
			_, hasNS := env[config.EnvReleaseNamespace]
			_, hasVersion := env[config.EnvVersion]
			if hasNS && hasVersion {
				return env
			}
		}
	}
	return nil
}
