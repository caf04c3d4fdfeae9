package fidelity

import (
	"context"
	"strconv"
	"sync"
	"testing"

	corev1 "k8s.io/api/core/v1"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/apimachinery/pkg/fields"
	"k8s.io/apimachinery/pkg/watch"
	"k8s.io/client-go/kubernetes"
)

// Helm's storage driver labels every release Secret `owner: helm` and `name: <release>` (helm.sh/helm/v3
// pkg/storage/driver, Secrets.newSecretsObject).
const (
	helmOwnerSelector = "owner=helm"
	helmNameLabel     = "name"
)

// istioInjection is the label the Istio namespace bootstrap puts on the KOF namespace (kof-mothership
// istio-namespace-configmap.yaml).
const istioInjection = "istio-injection"

// namespaceOrder watches one member's API server from before its ClusterProfiles exist: the resourceVersion at
// which Namespace ns first carries istio-injection: enabled and the first at which a Helm release Secret of one of
// the member's KOF services appears (the fidelity probe's release, which no MultiClusterService delivers, is not one).
// Both come from the one etcd of that API server, whose resourceVersions grow with every write, so the namespace
// came first exactly when its version is the smaller one.
type namespaceOrder struct {
	mu              sync.Mutex
	labelled, first int64
	firstRelease    string
}

// watchNamespaceOrder starts the two watches on tg's API server; they stop when the test ends.
func watchNamespaceOrder(t *testing.T, tg *target, ns string) *namespaceOrder {
	t.Helper()
	releases := map[string]bool{}
	for _, s := range tg.services {
		if !s.Resources {
			releases[s.Name] = true
		}
	}
	cs, err := kubernetes.NewForConfig(tg.server.Config)
	if err != nil {
		t.Fatal(err)
	}
	ctx, cancel := context.WithCancel(context.Background())
	o := &namespaceOrder{}
	nsWatch, err := cs.CoreV1().Namespaces().Watch(ctx, metav1.ListOptions{
		FieldSelector: fields.OneTermEqualSelector("metadata.name", ns).String()})
	if err != nil {
		t.Fatal(err)
	}
	relWatch, err := cs.CoreV1().Secrets("").Watch(ctx, metav1.ListOptions{LabelSelector: helmOwnerSelector})
	if err != nil {
		nsWatch.Stop()
		t.Fatal(err)
	}
	go o.run(nsWatch, func(obj metav1.Object, typ watch.EventType) {
		if o.labelled == 0 && obj.GetLabels()[istioInjection] == "enabled" {
			o.labelled = version(obj)
		}
	})
	go o.run(relWatch, func(obj metav1.Object, typ watch.EventType) {
		if typ == watch.Added && o.first == 0 && releases[obj.GetLabels()[helmNameLabel]] {
			o.first, o.firstRelease = version(obj), obj.GetNamespace()+"/"+obj.GetName()
		}
	})
	t.Cleanup(func() { nsWatch.Stop(); relWatch.Stop(); cancel() })
	return o
}

func (o *namespaceOrder) run(w watch.Interface, f func(metav1.Object, watch.EventType)) {
	for ev := range w.ResultChan() {
		obj, ok := ev.Object.(metav1.Object)
		if !ok {
			continue
		}
		if _, isNS := ev.Object.(*corev1.Namespace); !isNS {
			if _, isSecret := ev.Object.(*corev1.Secret); !isSecret {
				continue
			}
		}
		o.mu.Lock()
		f(obj, ev.Type)
		o.mu.Unlock()
	}
}

// check fails the test unless the namespace was labelled, and before the first Helm release Secret was written. It
// runs once every release of the member is deployed.
func (o *namespaceOrder) check(t *testing.T, cluster, ns string) {
	t.Helper()
	o.mu.Lock()
	defer o.mu.Unlock()
	switch {
	case o.labelled == 0:
		t.Errorf("cluster %s: Namespace %s did not carry %s: enabled by the time its KOF releases were deployed "+
			"(first release Secret %q)", cluster, ns, istioInjection, o.firstRelease)
	case o.first == 0:
		t.Errorf("cluster %s: no Helm release was installed", cluster)
	case o.first < o.labelled:
		t.Errorf("cluster %s: Helm release Secret %s (version %d) was written before Namespace %s was labelled "+
			"(version %d): the KOF services did not wait for the namespace", cluster, o.firstRelease, o.first, ns,
			o.labelled)
	}
}

// version returns obj's resourceVersion as the etcd revision it is.
func version(obj metav1.Object) int64 {
	v, _ := strconv.ParseInt(obj.GetResourceVersion(), 10, 64)
	return v
}
