package node

import (
	"context"
	"fmt"
	"net"
	"sort"
	"testing"
	"time"

	corev1 "k8s.io/api/core/v1"
	apierrors "k8s.io/apimachinery/pkg/api/errors"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/utils/ptr"
	"sigs.k8s.io/controller-runtime/pkg/client"

	"kof.dev/kof/internal/harness"
)

// podWait bounds the wait for one pod to become Ready (or gone).
const podWait = 90 * time.Second

// restrictedNamespace creates namespace name enforcing the `restricted` Pod Security level (latest version).
func restrictedNamespace(t *testing.T, name string) {
	t.Helper()
	namespace(t, name, map[string]string{
		"pod-security.kubernetes.io/enforce":         "restricted",
		"pod-security.kubernetes.io/enforce-version": "latest",
	})
}

// namespace creates namespace name with labels and waits for its `default` ServiceAccount.
func namespace(t *testing.T, name string, labels map[string]string) {
	t.Helper()
	ns := &corev1.Namespace{ObjectMeta: metav1.ObjectMeta{Name: name, Labels: labels}}
	if err := shared.node.Client.Create(context.Background(), ns); err != nil {
		t.Fatalf("create namespace %s: %v", name, err)
	}
	// ServiceAccount admission refuses pods until kube-controller-manager has made the namespace's `default`.
	deadline := time.Now().Add(podWait)
	for {
		var sa corev1.ServiceAccount
		err := shared.node.Client.Get(context.Background(), client.ObjectKey{Namespace: name, Name: "default"}, &sa)
		if err == nil {
			return
		}
		if time.Now().After(deadline) {
			t.Fatalf("no ServiceAccount %s/default after %s: %v", name, podWait, err)
		}
		time.Sleep(50 * time.Millisecond)
	}
}

// restrictedContext is a container security context the `restricted` level admits.
func restrictedContext() *corev1.SecurityContext {
	return &corev1.SecurityContext{RunAsNonRoot: ptr.To(true), AllowPrivilegeEscalation: ptr.To(false),
		ReadOnlyRootFilesystem: ptr.To(true), Capabilities: &corev1.Capabilities{Drop: []corev1.Capability{"ALL"}},
		SeccompProfile: &corev1.SeccompProfile{Type: corev1.SeccompProfileTypeRuntimeDefault}}
}

// waitPodReady waits until pod ns/name is Ready and returns it.
func waitPodReady(t *testing.T, ns, name string) *corev1.Pod {
	t.Helper()
	deadline := time.Now().Add(podWait)
	for {
		var p corev1.Pod
		if err := shared.node.Client.Get(context.Background(), client.ObjectKey{Namespace: ns, Name: name}, &p); err == nil {
			for _, c := range p.Status.Conditions {
				if c.Type == corev1.PodReady && c.Status == corev1.ConditionTrue {
					return &p
				}
			}
			if time.Now().After(deadline) {
				t.Fatalf("pod %s/%s not Ready within %s: phase %s, conditions %+v, containers %+v", ns, name, podWait,
					p.Status.Phase, p.Status.Conditions, p.Status.ContainerStatuses)
			}
		} else if time.Now().After(deadline) {
			t.Fatalf("pod %s/%s: %v", ns, name, err)
		}
		time.Sleep(50 * time.Millisecond)
	}
}

// Pods scheduled by kube-scheduler start on the node from an image containerd pulls from the node's registry, get an
// address of the pod range on the CNI bridge, and end when deleted; a pod the `restricted` level forbids is refused
// at admission. The test logs each pod's start latency (create to Ready) and the memory of the node's programs.
func TestPodsStartOnTheNode(t *testing.T) {
	ctx := context.Background()
	const ns = "node-pods"
	restrictedNamespace(t, ns)
	_, subnet, err := net.ParseCIDR(harness.PodSubnet)
	if err != nil {
		t.Fatal(err)
	}
	pod := func(name string) *corev1.Pod {
		return &corev1.Pod{ObjectMeta: metav1.ObjectMeta{Namespace: ns, Name: name}, Spec: corev1.PodSpec{
			TerminationGracePeriodSeconds: ptr.To[int64](1),
			Containers: []corev1.Container{{Name: "pause", Image: harness.NodePauseImage,
				SecurityContext: restrictedContext()}}}}
	}
	var latencies []time.Duration
	for i := range 4 {
		name := fmt.Sprintf("pause-%d", i)
		start := time.Now()
		if err := shared.node.Client.Create(ctx, pod(name)); err != nil {
			t.Fatalf("create pod %s: %v", name, err)
		}
		p := waitPodReady(t, ns, name)
		latencies = append(latencies, time.Since(start))
		if p.Spec.NodeName != harness.NodeName {
			t.Errorf("pod %s bound to %q, want %s (kube-scheduler)", name, p.Spec.NodeName, harness.NodeName)
		}
		if ip := net.ParseIP(p.Status.PodIP); ip == nil || !subnet.Contains(ip) {
			t.Errorf("pod %s has address %q, want one of %s", name, p.Status.PodIP, harness.PodSubnet)
		}
	}
	sorted := append([]time.Duration(nil), latencies...)
	sort.Slice(sorted, func(i, j int) bool { return sorted[i] < sorted[j] })
	t.Logf("pod start (create to Ready) %v; median %.2fs", latencies, sorted[len(sorted)/2].Seconds())

	root := pod("as-root")
	root.Spec.Containers[0].SecurityContext = nil
	err = shared.node.Client.Create(ctx, root)
	if err == nil || !apiForbidden(err) {
		t.Errorf("a pod without the restricted security context in %s: %v, want refused by Pod Security admission",
			ns, err)
	}

	mem, err := shared.node.Memory()
	if err != nil {
		t.Fatal(err)
	}
	var total int64
	for _, m := range mem {
		total += m.RSS
		t.Logf("memory %-16s x%d %6.1f MiB", m.Name, m.Count, float64(m.RSS)/(1<<20))
	}
	t.Logf("memory of the node's processes: %.0f MiB", float64(total)/(1<<20))

	if err := shared.node.Client.DeleteAllOf(ctx, &corev1.Pod{}, client.InNamespace(ns)); err != nil {
		t.Fatal(err)
	}
	deadline := time.Now().Add(podWait)
	for {
		var list corev1.PodList
		if err := shared.node.Client.List(ctx, &list, client.InNamespace(ns)); err != nil {
			t.Fatal(err)
		}
		if len(list.Items) == 0 {
			break
		}
		if time.Now().After(deadline) {
			t.Fatalf("%d pods of %s still there %s after their deletion", len(list.Items), ns, podWait)
		}
		time.Sleep(100 * time.Millisecond)
	}
}

// apiForbidden reports whether err is the API server's 403 (admission refusals are).
func apiForbidden(err error) bool { return apierrors.IsForbidden(err) }
