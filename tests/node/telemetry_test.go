package node

import (
	"context"
	"encoding/json"
	"fmt"
	"net/url"
	"path/filepath"
	"strings"
	"testing"
	"time"

	appsv1 "k8s.io/api/apps/v1"
	corev1 "k8s.io/api/core/v1"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/apimachinery/pkg/apis/meta/v1/unstructured"
	"k8s.io/apimachinery/pkg/runtime"
	"k8s.io/apimachinery/pkg/util/intstr"
	"k8s.io/utils/ptr"
	"sigs.k8s.io/controller-runtime/pkg/client"
	"sigs.k8s.io/yaml"

	"kof.dev/kof/chartlib/collector"
	"kof.dev/kof/internal/harness"
	"kof.dev/kof/internal/testproc"
)

// Names of the collector test.
const (
	// collectorsNamespace holds the kof-collectors release. Its node collector mounts hostPath volumes, which no
	// Pod Security level but `privileged` admits, so the namespace carries no enforce label.
	collectorsNamespace = "kof-collectors"
	// collectorCluster is the cluster name the collectors stamp on everything (k8s.cluster.name).
	collectorCluster = "node-child"
	// logMarkerPod is the pod whose container log the node collector must ship.
	logMarkerPod = "log-marker"
	// otelContainer and otelConfigDir are the collector container's name and its config folder as the
	// OpenTelemetry operator sets them (internal/manifests/collector: `otc-container`, `/conf/collector.yaml`).
	otelContainer = "otc-container"
	otelConfigDir = "/conf"
)

// kof-collectors installed with the Helm SDK (its ServiceAccount and RBAC, its OpenTelemetryCollectors as objects:
// the OpenTelemetry operator does not build offline), then the node collector's OpenTelemetryCollector, read back
// from the API server, run as the DaemonSet the operator would make of it (collectorDaemonSet says what differs) on
// KOF's collector image (bin/otelcol of ci/tools.sh, KOF's distribution, packed by the release code and pulled from
// the node's registry). Its exporters write to VictoriaMetrics and VictoriaLogs, pods of the same namespace
// (storagePods) reached through their Services. The host metrics of the node arrive with the `cluster` label and the container log of a pod
// started after the collector with k8s.cluster.name, both the cluster's name.
func TestCollectorOnTheNode(t *testing.T) {
	ctx := context.Background()
	n := shared.node
	if err := n.WaitCRDs(); err != nil { // the OpenTelemetryCollector CRD
		t.Fatal(err)
	}
	start := time.Now()
	namespace(t, collectorsNamespace, nil)
	servers := storagePods(t, collectorsNamespace, testproc.VictoriaMetricsSpec(), testproc.VictoriaLogsSpec())
	vm, vl := servers[0], servers[1]
	h := &harness.Helm{Kubeconfig: n.Kubeconfig, Client: n.Client}
	if _, err := h.Install(ctx, harness.Release{Name: collector.CollectorsChart, Namespace: collectorsNamespace,
		ChartDir: filepath.Join(shared.root, "charts", collector.CollectorsChart), Values: map[string]any{
			"kof": map[string]any{"basicAuth": false,
				"metrics":   map[string]any{"endpoint": vm.URL + "/api/v1/write"},
				"logs":      map[string]any{"endpoint": vl.URL + "/insert/opentelemetry/v1/logs"},
				"auditLogs": map[string]any{"endpoint": vl.URL + "/insert/opentelemetry/v1/logs"},
			},
			"opentelemetry-kube-stack": map[string]any{"clusterName": collectorCluster},
			// The control plane of this node is no k0s one: no etcd client certificate under PKI_PATH.
			"collectors": map[string]any{"cluster": map[string]any{"enabled": false},
				"node": map[string]any{"controlPlaneMetrics": false}},
			"images": map[string]any{"collector": map[string]any{"registry": harness.NodeRegistry,
				"repository": "kof/otelcol", "tag": imageVersion}},
		}}); err != nil {
		t.Fatalf("install kof-collectors: %v", err)
	}
	t.Cleanup(func() { _ = h.Uninstall(collector.CollectorsChart, collectorsNamespace) })
	list := &unstructured.UnstructuredList{}
	list.SetAPIVersion("opentelemetry.io/v1beta1")
	list.SetKind(collector.CollectorKind + "List")
	if err := n.Client.List(ctx, list, client.InNamespace(collectorsNamespace)); err != nil {
		t.Fatal(err)
	}
	var otc *unstructured.Unstructured
	for i := range list.Items {
		if mode, _, _ := unstructured.NestedString(list.Items[i].Object, "spec", "mode"); mode == "daemonset" {
			otc = &list.Items[i]
		}
	}
	if otc == nil {
		t.Fatalf("kof-collectors made no node OpenTelemetryCollector (%d in %s)", len(list.Items), collectorsNamespace)
	}
	ref := imageRef(t, "otelcol")
	cm, ds := collectorDaemonSet(t, otc)
	for _, o := range []client.Object{cm, ds} {
		if err := n.Client.Create(ctx, o); err != nil {
			t.Fatalf("create %s: %v", o.GetName(), err)
		}
	}
	pod := waitDaemonSet(t, ds)
	if id := pod.Status.ContainerStatuses[0].ImageID; !strings.HasSuffix(id, strings.SplitN(ref, "@", 2)[1]) {
		t.Errorf("collector pod %s runs %s, want the pushed %s", pod.Name, id, ref)
	}
	t.Logf("node collector pod %s Ready %.1fs after the storage pods' creation (image %s)", pod.Name,
		time.Since(start).Seconds(), ref)

	// A pod that logs one line and ends, started once the collector runs: the filelog receiver reads new files
	// from their start.
	marker := &corev1.Pod{ObjectMeta: metav1.ObjectMeta{Namespace: collectorsNamespace, Name: logMarkerPod},
		Spec: corev1.PodSpec{RestartPolicy: corev1.RestartPolicyNever, TerminationGracePeriodSeconds: ptr.To[int64](1),
			Containers: []corev1.Container{{Name: "version", Image: pod.Spec.Containers[0].Image, Args: []string{"--version"},
				SecurityContext: restrictedContext()}}}}
	if err := n.Client.Create(ctx, marker); err != nil {
		t.Fatal(err)
	}

	shipped := time.Now()
	series := waitQuery(t, vm.URL+"/api/v1/series?"+url.Values{"match[]": {
		fmt.Sprintf(`system_memory_usage_bytes{cluster=%q}`, collectorCluster)}}.Encode(), vm, func(body []byte) bool {
		var r struct {
			Data []map[string]string `json:"data"`
		}
		return json.Unmarshal(body, &r) == nil && len(r.Data) > 0
	})
	t.Logf("host metrics of the node in VictoriaMetrics %.1fs after the collector was Ready: %.300s",
		time.Since(shipped).Seconds(), series)
	query := fmt.Sprintf(`k8s.cluster.name:=%q AND k8s.pod.name:=%q`, collectorCluster, logMarkerPod)
	logs := waitQuery(t, vl.URL+"/select/logsql/query?"+url.Values{"query": {query}}.Encode(), vl, func(body []byte) bool {
		return strings.Contains(string(body), "otelcol")
	})
	t.Logf("pod %s's log line in VictoriaLogs %.1fs after the collector was Ready: %.300s", logMarkerPod,
		time.Since(shipped).Seconds(), logs)
}

// collectorDaemonSet returns the ConfigMap and DaemonSet the OpenTelemetry operator makes of the daemonset-mode
// OpenTelemetryCollector otc (github.com/open-telemetry/opentelemetry-operator internal/manifests/collector): the
// config as `collector.yaml` of a ConfigMap mounted at /conf, the container `otc-container` with
// `--config=/conf/collector.yaml`, POD_NAME and the spec's env, image, resources, security contexts, volumes and
// mounts, ServiceAccount and tolerations, pods labelled as the operator labels them. What differs, for this node:
//   - the kubeletstats receiver is left out of the metrics pipeline: this kubelet authenticates x509 clients only,
//     and the node has no DNS for the receiver's `https://<node name>:10250`;
//   - the `varlogpods` hostPath is the kubelet's podLogsDir of the node (its scratch folder) instead of
//     /var/log/pods, mounted at /var/log/pods as rendered;
//   - the hostfs mount has no HostToContainer propagation: the node's mount namespace is private, and runc refuses
//     that propagation from a mount that is neither shared nor slave.
func collectorDaemonSet(t *testing.T, otc *unstructured.Unstructured) (*corev1.ConfigMap, *appsv1.DaemonSet) {
	t.Helper()
	var spec struct {
		Image              string                      `json:"image"`
		ServiceAccount     string                      `json:"serviceAccount"`
		Resources          corev1.ResourceRequirements `json:"resources"`
		Tolerations        []corev1.Toleration         `json:"tolerations"`
		SecurityContext    *corev1.SecurityContext     `json:"securityContext"`
		PodSecurityContext *corev1.PodSecurityContext  `json:"podSecurityContext"`
		Env                []corev1.EnvVar             `json:"env"`
		Volumes            []corev1.Volume             `json:"volumes"`
		VolumeMounts       []corev1.VolumeMount        `json:"volumeMounts"`
		Config             map[string]any              `json:"config"`
	}
	raw, _, _ := unstructured.NestedMap(otc.Object, "spec")
	if err := runtime.DefaultUnstructuredConverter.FromUnstructured(raw, &spec); err != nil {
		t.Fatalf("OpenTelemetryCollector %s spec: %v", otc.GetName(), err)
	}
	pipelines, _, _ := unstructured.NestedMap(spec.Config, "service", "pipelines")
	metrics, _ := pipelines["metrics"].(map[string]any)
	var receivers []any
	for _, r := range metrics["receivers"].([]any) {
		if r != "kubeletstats" {
			receivers = append(receivers, r)
		}
	}
	metrics["receivers"] = receivers
	_ = unstructured.SetNestedMap(spec.Config, pipelines, "service", "pipelines")
	delete(spec.Config["receivers"].(map[string]any), "kubeletstats")
	for i, v := range spec.Volumes {
		if v.HostPath != nil && v.HostPath.Path == "/var/log/pods" {
			spec.Volumes[i].HostPath.Path = filepath.Join(shared.node.Dir, "kubelet", "logs")
		}
	}
	for i := range spec.VolumeMounts {
		spec.VolumeMounts[i].MountPropagation = nil
	}
	body, err := yaml.Marshal(spec.Config)
	if err != nil {
		t.Fatal(err)
	}
	name := otc.GetName() + "-collector"
	labels := map[string]string{"app.kubernetes.io/name": name, "app.kubernetes.io/component": "opentelemetry-collector",
		"app.kubernetes.io/managed-by": "opentelemetry-operator",
		"app.kubernetes.io/instance":   otc.GetNamespace() + "." + otc.GetName()}
	cm := &corev1.ConfigMap{ObjectMeta: metav1.ObjectMeta{Namespace: otc.GetNamespace(), Name: name, Labels: labels},
		Data: map[string]string{"collector.yaml": string(body)}}
	env := append([]corev1.EnvVar{{Name: "POD_NAME", ValueFrom: &corev1.EnvVarSource{
		FieldRef: &corev1.ObjectFieldSelector{FieldPath: "metadata.name"}}}}, spec.Env...)
	mounts := append([]corev1.VolumeMount{{Name: "otc-internal", MountPath: otelConfigDir}}, spec.VolumeMounts...)
	volumes := append([]corev1.Volume{{Name: "otc-internal", VolumeSource: corev1.VolumeSource{
		ConfigMap: &corev1.ConfigMapVolumeSource{LocalObjectReference: corev1.LocalObjectReference{Name: name},
			Items: []corev1.KeyToPath{{Key: "collector.yaml", Path: "collector.yaml"}}}}}}, spec.Volumes...)
	// The operator's probes on the health_check extension; the readiness probe's period is the test's, so that
	// Ready follows the collector's start closely.
	health := corev1.ProbeHandler{HTTPGet: &corev1.HTTPGetAction{Path: "/", Port: intstr.FromInt32(13133)}}
	ds := &appsv1.DaemonSet{ObjectMeta: metav1.ObjectMeta{Namespace: otc.GetNamespace(), Name: name, Labels: labels},
		Spec: appsv1.DaemonSetSpec{Selector: &metav1.LabelSelector{MatchLabels: labels},
			Template: corev1.PodTemplateSpec{ObjectMeta: metav1.ObjectMeta{Labels: labels}, Spec: corev1.PodSpec{
				ServiceAccountName: spec.ServiceAccount, SecurityContext: spec.PodSecurityContext,
				Tolerations: spec.Tolerations, Volumes: volumes, TerminationGracePeriodSeconds: ptr.To[int64](2),
				Containers: []corev1.Container{{Name: otelContainer, Image: spec.Image,
					Args: []string{"--config=" + otelConfigDir + "/collector.yaml"}, Env: env,
					Resources: spec.Resources, SecurityContext: spec.SecurityContext, VolumeMounts: mounts,
					LivenessProbe:  &corev1.Probe{ProbeHandler: health},
					ReadinessProbe: &corev1.Probe{ProbeHandler: health, PeriodSeconds: 1}}}}}}}
	return cm, ds
}

// waitDaemonSet waits until ds has its one pod Ready on the node and returns the pod.
func waitDaemonSet(t *testing.T, ds *appsv1.DaemonSet) *corev1.Pod {
	t.Helper()
	deadline := time.Now().Add(podWait)
	for {
		var list corev1.PodList
		if err := shared.node.Client.List(context.Background(), &list, client.InNamespace(ds.Namespace),
			client.MatchingLabels(ds.Spec.Selector.MatchLabels)); err != nil {
			t.Fatal(err)
		}
		if len(list.Items) == 1 {
			for _, c := range list.Items[0].Status.Conditions {
				if c.Type == corev1.PodReady && c.Status == corev1.ConditionTrue {
					return &list.Items[0]
				}
			}
		}
		if time.Now().After(deadline) {
			var b strings.Builder
			for _, p := range list.Items {
				fmt.Fprintf(&b, "pod %s: %s %+v\n%.3000s\n", p.Name, p.Status.Phase, p.Status.ContainerStatuses, podLog(p))
			}
			t.Fatalf("DaemonSet %s has no Ready pod within %s:\n%s%s", ds.Name, podWait, b.String(),
				harness.Events(context.Background(), shared.node.Client, ds.Namespace))
		}
		time.Sleep(100 * time.Millisecond)
	}
}

// waitQuery GETs url until ok accepts the body (after a flush of server s), for up to two minutes (the collector
// scrapes host metrics every 30 s), and returns the body.
func waitQuery(t *testing.T, url string, s *testproc.Server, ok func([]byte) bool) string {
	t.Helper()
	deadline := time.Now().Add(2 * time.Minute)
	for {
		get(t, s.URL+"/internal/force_flush")
		body := get(t, url)
		if ok([]byte(body)) {
			return body
		}
		if time.Now().After(deadline) {
			t.Fatalf("GET %s: no matching data within 2 minutes: %.500s", url, body)
		}
		time.Sleep(time.Second)
	}
}
