package fleet

import (
	"encoding/base64"
	"fmt"
	"maps"

	monitoringv1 "github.com/prometheus-operator/prometheus-operator/pkg/apis/monitoring/v1"
	corev1 "k8s.io/api/core/v1"
	"k8s.io/apimachinery/pkg/apis/meta/v1/unstructured"

	kofv1 "kof.dev/kof/operator/api/v1beta1"
	"kof.dev/kof/operator/config"
	"kof.dev/kof/operator/discovery"
	"kof.dev/kof/operator/names"
	operator "kof.dev/kof/operator/outputs"
	"kof.dev/kof/operator/rules"
)

// OfflinePassword is the password of every VMUser credentials Secret the fleet renderer makes: the operator draws a
// random one on a live cluster; offline renders must be deterministic and never look like real credentials.
const OfflinePassword = "offline-placeholder-not-a-real-password"

// vmrulesKey is the data key of a vmrules ConfigMap.
const vmrulesKey = "values"

// operatorOutputs computes the objects the KOF operator writes for the ClusterDeployments of in, offline, from the
// operator's own pure packages (operator/outputs composes the ConfigMaps and Secrets) and the environment the charts
// give the kof-operator Deployment:
//   - regional cluster: ConfigMap `kof-<c>` (discovery.RegionalData), admin credentials Secret, vmrules ConfigMap
//     (rules.Merge over the mothership's PrometheusRules and the rule patch ConfigMaps);
//   - child cluster: ConfigMap `kof-cluster-config-<c>` with the data of its regional (discovery.FindRegional) or,
//     regionless, of the management cluster (discovery.RegionlessData), and its credentials Secret;
//   - regionless: the management cluster's ConfigMap `kof-<mgmt>` and admin Secret.
//
// Like the operator, it makes no credentials for the management cluster in M2R mode.
//
// Problems of one cluster (malformed annotations, no regional cluster) are returned per `namespace/name`; the
// error is for an operator environment the operator itself would refuse. Without a kof-operator Deployment no
// outputs are made. Source: docs/contract.md ("Objects the operator writes").
func operatorOutputs(m *management, in *inputs) ([]*unstructured.Unstructured, map[string][]error, error) {
	env := operatorEnv(m.objects)
	if env == nil {
		return nil, nil, nil
	}
	cfg, err := config.Load(func(k string) string { return env[k] })
	if err != nil {
		return nil, nil, fmt.Errorf("kof-operator environment rendered by kof-mothership: %w", err)
	}
	o := &outputs{cfg: cfg, errs: map[string][]error{}, regionalData: map[string]map[string]string{}}
	var regionals, children []discovery.Cluster
	for _, d := range in.deployments {
		if d.role == RoleNone {
			continue
		}
		c, err := d.discoveryCluster()
		if err != nil {
			o.fail(d.key(), err)
			continue
		}
		if d.role == RoleRegional {
			regionals = append(regionals, c)
		} else {
			children = append(children, c)
		}
	}
	if cfg.Regionless {
		o.regionless()
	} else {
		for _, r := range regionals {
			o.regional(r)
		}
		o.vmrules(m.objects, in.objects, regionals)
	}
	bound := regionals[:0:0]
	for _, r := range regionals {
		if _, ok := o.regionalData[r.Key()]; ok {
			bound = append(bound, r)
		}
	}
	for _, c := range children {
		o.child(c, bound)
	}
	return o.objs, o.errs, nil
}

// outputs accumulates the operator's objects and per-cluster problems.
type outputs struct {
	cfg          config.Config
	objs         []*unstructured.Unstructured
	errs         map[string][]error
	regionalData map[string]map[string]string
}

func (o *outputs) add(obj *unstructured.Unstructured) { o.objs = append(o.objs, obj) }

func (o *outputs) fail(key string, err error) { o.errs[key] = append(o.errs[key], err) }

// regional adds the ConfigMap and admin credentials of regional cluster r.
func (o *outputs) regional(r discovery.Cluster) {
	data, err := discovery.RegionalData(r)
	if err != nil {
		o.fail(r.Key(), fmt.Errorf("regional ConfigMap %s: %w", names.RegionalConfigMap(r.Name), err))
		return
	}
	o.regionalData[r.Key()] = data
	o.add(configMapObject(operator.RegionalConfigMap(r.Namespace, r.Name, data)))
	o.add(credentials(r.Namespace, names.AdminVMUserBase(r.Namespace, r.Name)))
}

// regionless adds the management cluster's regionless ConfigMap and admin credentials.
func (o *outputs) regionless() {
	ref, cm := operator.RegionlessRef(o.cfg), operator.RegionlessConfigMap(o.cfg)
	o.regionalData[ref.Namespace+"/"+ref.Name] = cm.Data
	o.add(configMapObject(cm))
	o.add(credentials(ref.Namespace, names.AdminVMUserBase(ref.Namespace, ref.Name)))
}

// child adds the ConfigMap and credentials of child c, bound to one of regionals (or the management cluster when
// regionless) as the operator binds it (operator/outputs.ChildRegional).
func (o *outputs) child(c discovery.Cluster, regionals []discovery.Cluster) {
	ref, err := operator.ChildRegional(o.cfg, c, regionals)
	if err != nil {
		o.fail(c.Key(), fmt.Errorf("child ConfigMap %s: %w", names.ChildConfigMap(c.Name), err))
		return
	}
	data := maps.Clone(o.regionalData[ref.Namespace+"/"+ref.Name])
	o.add(configMapObject(operator.ChildConfigMap(c.Namespace, c.Name, ref, data)))
	o.add(credentials(c.Namespace, names.ChildVMUserBase(c.Namespace, c.Name)))
}

// vmrules adds each regional cluster's `kof-record-vmrules-<c>` ConfigMap from the PrometheusRules of the
// management cluster and the rule patch ConfigMaps among mgmt and given. Problems are recorded on every regional
// cluster whose rules they touch.
func (o *outputs) vmrules(mgmt, given []*unstructured.Unstructured, regionals []discovery.Cluster) {
	in := rules.Input{}
	var prs []monitoringv1.PrometheusRule
	for _, obj := range append(append([]*unstructured.Unstructured{}, mgmt...), given...) {
		switch {
		case obj.GetKind() == "PrometheusRule":
			var pr monitoringv1.PrometheusRule
			if err := fromUnstructured(obj, &pr); err != nil {
				for _, r := range regionals {
					o.fail(r.Key(), fmt.Errorf("vmrules: %w", err))
				}
				continue
			}
			prs = append(prs, pr)
		case obj.GetKind() == "ConfigMap" && obj.GetAPIVersion() == "v1":
			if s, ok := ruleSource(obj); ok {
				in.Sources = append(in.Sources, s)
			}
		}
	}
	in.Groups = rules.FromPrometheusRules(prs)
	for _, r := range regionals {
		in.Clusters = append(in.Clusters, r.Name)
	}
	out, problems := rules.Merge(in, rules.Output{})
	for _, p := range problems {
		for _, r := range regionals {
			if p.Cluster == "" || p.Cluster == r.Name {
				o.fail(r.Key(), fmt.Errorf("vmrules %s: %w", names.VMRulesConfigMap(r.Name), p))
			}
		}
	}
	for _, r := range regionals {
		if _, ok := o.regionalData[r.Key()]; !ok {
			continue
		}
		o.add(configMap(r.Namespace, names.VMRulesConfigMap(r.Name), operator.Labels(),
			map[string]string{vmrulesKey: out.VMRules[r.Name]}))
	}
}

// ruleSource reads a rule patch ConfigMap (labelled with the alert or record rules cluster label).
func ruleSource(cm *unstructured.Unstructured) (rules.Source, bool) {
	lbls := cm.GetLabels()
	s := rules.Source{Namespace: cm.GetNamespace(), Name: cm.GetName()}
	if v, ok := lbls[kofv1.AlertRulesClusterLabel]; ok {
		s.Kind, s.Cluster = rules.Alert, v
	} else if v, ok := lbls[kofv1.RecordRulesClusterLabel]; ok {
		s.Kind, s.Cluster = rules.Record, v
	} else {
		return s, false
	}
	data, _, _ := unstructured.NestedStringMap(cm.Object, "data")
	s.Data = data
	return s, true
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

// configMapObject returns cm as an unstructured object with only its kind, name, namespace, labels and data.
func configMapObject(cm *corev1.ConfigMap) *unstructured.Unstructured {
	return configMap(cm.Namespace, cm.Name, cm.Labels, cm.Data)
}

// configMap returns a ConfigMap object.
func configMap(ns, name string, lbls, data map[string]string) *unstructured.Unstructured {
	d := make(map[string]any, len(data))
	for k, v := range data {
		d[k] = v
	}
	obj := &unstructured.Unstructured{Object: map[string]any{"apiVersion": "v1", "kind": "ConfigMap", "data": d}}
	obj.SetNamespace(ns)
	obj.SetName(name)
	obj.SetLabels(lbls)
	return obj
}

// credentials returns the VMUser credentials Secret of bundle base in ns (operator/outputs.CredentialsSecret) with
// password OfflinePassword, its data base64-encoded as the API serves Secret data.
func credentials(ns, base string) *unstructured.Unstructured {
	sec := operator.CredentialsSecret(ns, base, OfflinePassword)
	data := make(map[string]any, len(sec.Data))
	for k, v := range sec.Data {
		data[k] = base64.StdEncoding.EncodeToString(v)
	}
	obj := &unstructured.Unstructured{Object: map[string]any{
		"apiVersion": "v1", "kind": "Secret", "type": string(sec.Type), "data": data,
	}}
	obj.SetNamespace(sec.Namespace)
	obj.SetName(sec.Name)
	obj.SetLabels(sec.Labels)
	return obj
}
