package node

import (
	"context"
	"fmt"
	"net"
	"net/http"
	"strconv"
	"strings"
	"testing"
	"time"

	corev1 "k8s.io/api/core/v1"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/apimachinery/pkg/util/intstr"
	"k8s.io/utils/ptr"
	"sigs.k8s.io/controller-runtime/pkg/client"

	"kof.dev/kof/internal/testproc"
)

// storagePorts are the ports the storage pods listen on and their Services expose, by program (the programs' own
// defaults).
var storagePorts = map[string]int{"victoria-metrics": 8428, "victoria-logs": 9428, "minio": 9000}

// storagePods runs each server of specs (internal/testproc's VictoriaMetrics, VictoriaLogs and MinIO, with the
// arguments and environment the host-process tests give them) as a pod of namespace ns, its image the program
// ci/tools.sh builds into bin/ packed by the release code (nodeImages), its data in an emptyDir, behind a ClusterIP
// Service; the pods start at once. It returns them, in the order of specs, as testproc Servers whose URL is the
// Service's (kube-proxy's rules reach it from the test and from pods alike); they are deleted when the test ends.
func storagePods(t *testing.T, ns string, specs ...testproc.Spec) []*testproc.Server {
	t.Helper()
	ctx := context.Background()
	c := shared.node.Client
	var svcs []*corev1.Service
	for _, spec := range specs {
		port, ok := storagePorts[spec.Tool]
		if !ok {
			t.Fatalf("no storage pod for %s", spec.Tool)
		}
		labels := map[string]string{"app.kubernetes.io/name": spec.Tool}
		var env []corev1.EnvVar
		for _, e := range spec.Env {
			k, v, _ := strings.Cut(e, "=")
			env = append(env, corev1.EnvVar{Name: k, Value: v})
		}
		// MinIO keeps its configuration under $HOME; the root filesystem is read-only.
		env = append(env, corev1.EnvVar{Name: "HOME", Value: "/data"})
		pod := &corev1.Pod{ObjectMeta: metav1.ObjectMeta{Namespace: ns, Name: spec.Tool, Labels: labels},
			Spec: corev1.PodSpec{TerminationGracePeriodSeconds: ptr.To[int64](1),
				Volumes: []corev1.Volume{{Name: "data", VolumeSource: corev1.VolumeSource{EmptyDir: &corev1.EmptyDirVolumeSource{}}}},
				Containers: []corev1.Container{{Name: spec.Tool, Image: imageRef(t, spec.Tool),
					Args: spec.Args(":"+strconv.Itoa(port), "/data"), Env: env, SecurityContext: restrictedContext(),
					VolumeMounts: []corev1.VolumeMount{{Name: "data", MountPath: "/data"}},
					Ports:        []corev1.ContainerPort{{Name: "http", ContainerPort: int32(port)}},
					// Probed every second, so the pod is Ready as soon as it answers; once Ready it stays behind
					// its Service through 30 s of slow answers (5 s each): on a loaded machine a storage server's
					// health check can take over a second, and a pod marked unready leaves its Service refusing
					// connections, which an exporter run reports, rightly, as its source or S3 being down.
					ReadinessProbe: &corev1.Probe{PeriodSeconds: 1, TimeoutSeconds: 5, FailureThreshold: 30,
						ProbeHandler: corev1.ProbeHandler{
							HTTPGet: &corev1.HTTPGetAction{Path: spec.Health, Port: intstr.FromString("http")}}}}}}}
		svc := &corev1.Service{ObjectMeta: metav1.ObjectMeta{Namespace: ns, Name: spec.Tool},
			Spec: corev1.ServiceSpec{Selector: labels, Ports: []corev1.ServicePort{{Name: "http", Port: int32(port),
				TargetPort: intstr.FromString("http")}}}}
		for _, o := range []client.Object{pod, svc} {
			if err := c.Create(ctx, o); err != nil {
				t.Fatalf("create %s %s/%s: %v", o.GetObjectKind().GroupVersionKind().Kind, ns, o.GetName(), err)
			}
			t.Cleanup(func() { _ = c.Delete(context.Background(), o, client.GracePeriodSeconds(0)) })
		}
		svcs = append(svcs, svc)
	}
	out := make([]*testproc.Server, len(specs))
	for i, spec := range specs {
		waitPodReady(t, ns, spec.Tool)
		addr := net.JoinHostPort(svcs[i].Spec.ClusterIP, strconv.Itoa(int(svcs[i].Spec.Ports[0].Port)))
		out[i] = &testproc.Server{URL: "http://" + addr, Addr: addr, Dir: "pod " + ns + "/" + spec.Tool}
		waitService(t, out[i].URL+spec.Health)
	}
	return out
}

// waitService waits until url answers through its Service (kube-proxy writes the Service's rules once the pod is
// Ready, a moment later).
func waitService(t *testing.T, url string) {
	t.Helper()
	deadline := time.Now().Add(podWait)
	for {
		if err := getErr(url); err == nil {
			return
		} else if time.Now().After(deadline) {
			t.Fatalf("%s does not answer %s after its pod was Ready: %v", url, podWait, err)
		}
		time.Sleep(50 * time.Millisecond)
	}
}

// getErr GETs url and returns an error unless it answers 200.
func getErr(url string) error {
	hc := &http.Client{Timeout: 5 * time.Second}
	resp, err := hc.Get(url) //nolint:noctx // the node's network
	if err != nil {
		return err
	}
	_ = resp.Body.Close()
	if resp.StatusCode != http.StatusOK {
		return fmt.Errorf("GET %s: %s", url, resp.Status)
	}
	return nil
}
