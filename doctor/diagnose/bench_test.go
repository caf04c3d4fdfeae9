package diagnose

import (
	"fmt"
	"testing"

	kcmv1 "github.com/K0rdent/kcm/api/v1beta1"
	addonv1 "github.com/projectsveltos/addon-controller/api/v1beta1"
	corev1 "k8s.io/api/core/v1"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/apimachinery/pkg/apis/meta/v1/unstructured"

	"kof.dev/kof/chartlib/fleet"
	kofv1 "kof.dev/kof/operator/api/v1beta1"
	"kof.dev/kof/operator/names"
)

// fleetSnapshot returns a live snapshot of regionals regional clusters (one per AWS region) with children children
// each, as a running KOF makes it: every cluster's operator ConfigMap, Secret and VMUser, one propagation
// MultiClusterService per child, a ClusterSummary and two events per child; and the prediction of the ConfigMaps.
func fleetSnapshot(regionals, children int) (*Snapshot, *fleet.Fleet) {
	var cds []kcmv1.ClusterDeployment
	s := snapshot(nil, childMCS, mcs("kof-regional-cluster", map[string]string{
		kofv1.ClusterRoleLabel: kofv1.RoleRegional}, "kof-storage", "kof-collectors"))
	pred := &fleet.Fleet{}
	ours := map[string]string{kofv1.ManagedByLabel: kofv1.ManagedBy}
	addCM := func(name string) {
		s.ConfigMaps = append(s.ConfigMaps, corev1.ConfigMap{ObjectMeta: metav1.ObjectMeta{Namespace: ns, Name: name,
			Labels: ours}, Data: map[string]string{"write_metrics_endpoint": "https://vmauth.example.com/vm"}})
		u := &unstructured.Unstructured{Object: map[string]any{"apiVersion": "v1", "kind": "ConfigMap",
			"data": map[string]any{"write_metrics_endpoint": "https://vmauth.example.com/vm"}}}
		u.SetNamespace(ns)
		u.SetName(name)
		u.SetLabels(ours)
		pred.Operator = append(pred.Operator, u)
	}
	for r := 0; r < regionals; r++ {
		region := fmt.Sprintf("region-%d", r)
		rname := fmt.Sprintf("regional-%d", r)
		cds = append(cds, regional(rname, region))
		addCM(names.RegionalConfigMap(rname))
		for c := 0; c < children; c++ {
			cname := fmt.Sprintf("child-%d-%d", r, c)
			cds = append(cds, child(cname, region))
			addCM(names.ChildConfigMap(cname))
			base := names.ChildVMUserBase(ns, cname)
			meta := metav1.PartialObjectMetadata{ObjectMeta: metav1.ObjectMeta{Namespace: ns, Labels: ours}}
			meta.Name = names.VMUserSecret(base)
			s.Secrets = append(s.Secrets, meta)
			meta.Name = names.VMUser(base)
			s.VMUsers = append(s.VMUsers, meta)
			prop := mcs(names.VMUserPropagation(base), map[string]string{kofv1.ClusterNameLabel: rname}, "kof-propagation")
			prop.Labels = ours
			s.MCSs = append(s.MCSs, prop)
			s.Summaries = append(s.Summaries, addonv1.ClusterSummary{ObjectMeta: metav1.ObjectMeta{Namespace: ns,
				Name: "p--" + cname, Labels: map[string]string{summaryClusterLabel: cname}}})
			for i := 0; i < 2; i++ {
				s.Events = append(s.Events, corev1.Event{ObjectMeta: metav1.ObjectMeta{Namespace: ns,
					Name: fmt.Sprintf("%s.%d", cname, i)}, Type: corev1.EventTypeNormal, Reason: "Configured",
					ReportingController: "kof-clusterdeployment", InvolvedObject: corev1.ObjectReference{
						Kind: kcmv1.ClusterDeploymentKind, Namespace: ns, Name: cname}})
			}
		}
	}
	for i := range cds {
		cds[i].Labels[kofv1.ClusterNameLabel] = cds[i].Name
	}
	s.Deployments = cds
	s.sort()
	return s, pred
}

func benchmarkDiagnose(b *testing.B, regionals, children int) {
	s, pred := fleetSnapshot(regionals, children)
	b.ReportAllocs()
	for b.Loop() {
		d := Diagnose(Input{Live: s, Predicted: pred})
		if len(d.Clusters) != 1+regionals*(1+children) {
			b.Fatalf("%d clusters", len(d.Clusters))
		}
	}
}

// BenchmarkDiagnose100 and BenchmarkDiagnose1000 diagnose 2 regional clusters with 50 and with 500 children
// each; make bench prints the ratio of ten times the first to the second (1.0: the diagnosis grows linearly with
// the fleet).
func BenchmarkDiagnose100(b *testing.B)  { benchmarkDiagnose(b, 2, 50) }
func BenchmarkDiagnose1000(b *testing.B) { benchmarkDiagnose(b, 2, 500) }
