package exporters

import (
	"context"
	"fmt"
	"os"
	"path/filepath"
	"strings"
	"testing"

	"github.com/go-logr/logr"
	corev1 "k8s.io/api/core/v1"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"sigs.k8s.io/controller-runtime/pkg/client"
	ctrllog "sigs.k8s.io/controller-runtime/pkg/log"

	"kof.dev/kof/internal/harness"
	"kof.dev/kof/internal/proc"
	"kof.dev/kof/internal/testproc"
)

// namespace is the release namespace of the user guide (`helm upgrade -i -n kof`).
const namespace = "kof"

// cp is the control plane of the package (TestMain); root the repository.
var (
	cp   *harness.ControlPlane
	root string
	bins string
)

func TestMain(m *testing.M) { os.Exit(run(m)) }

func run(m *testing.M) (code int) {
	// Every temporary folder of the run (envtest's too) lives in one scratch folder, removed at the end or, after a
	// killed run, by the next one.
	_, removeScratch, err := proc.UseScratch("exporters")
	if err != nil {
		fmt.Fprintln(os.Stderr, err)
		return 1
	}
	defer func() { removeScratch(code) }()
	ctrllog.SetLogger(logr.Discard())
	if root, err = filepath.Abs(filepath.Join("..", "..")); err != nil {
		fmt.Fprintln(os.Stderr, err)
		return 1
	}
	work, err := os.MkdirTemp("", "kof-exporters-")
	if err != nil {
		fmt.Fprintln(os.Stderr, err)
		return 1
	}
	defer os.RemoveAll(work)
	bins = work
	cp, err = harness.StartControlPlane(harness.ControlPlaneOptions{
		AssetsDir: filepath.Join(root, "bin"), WorkDir: work,
		CRDDirs: []string{filepath.Join(root, "operator", "config", "crd", "bases")},
	})
	if err != nil {
		fmt.Fprintln(os.Stderr, err)
		return 1
	}
	code = m.Run()
	if err := cp.Stop(); err != nil {
		fmt.Fprintln(os.Stderr, err)
		code = 1
	}
	return code
}

// buildBinary builds cmd/<name> into the package's work folder (testproc.Program) and returns its path.
func buildBinary(t *testing.T, name string) string {
	t.Helper()
	return testproc.Program(t, "./cmd/"+name, bins)
}

// helm returns the Helm SDK installer of the control plane.
func helm() *harness.Helm { return &harness.Helm{Kubeconfig: cp.Kubeconfig, Client: cp.Client} }

// createSecret creates (or replaces) a Secret in the release namespace, as `kubectl create secret generic` does.
func createSecret(t *testing.T, name string, data map[string]string) {
	t.Helper()
	ctx := context.Background()
	ns := &corev1.Namespace{ObjectMeta: metav1.ObjectMeta{Name: namespace}}
	if err := cp.Client.Create(ctx, ns); err != nil && !strings.Contains(err.Error(), "already exists") {
		t.Fatal(err)
	}
	s := &corev1.Secret{ObjectMeta: metav1.ObjectMeta{Name: name, Namespace: namespace}, StringData: data}
	_ = cp.Client.Delete(ctx, s)
	if err := cp.Client.Create(ctx, s); err != nil {
		t.Fatal(err)
	}
}

// jobEnv returns the environment the container of the CronJob's job template gets: plain values and Secret
// references resolved from the API server (as the kubelet does); a missing Secret or key fails the test.
func jobEnv(t *testing.T, c corev1.Container) []string {
	t.Helper()
	var out []string
	for _, e := range c.Env {
		switch {
		case e.ValueFrom == nil:
			out = append(out, e.Name+"="+e.Value)
		case e.ValueFrom.SecretKeyRef != nil:
			var s corev1.Secret
			ref := e.ValueFrom.SecretKeyRef
			if err := cp.Client.Get(context.Background(), client.ObjectKey{Namespace: namespace, Name: ref.Name}, &s); err != nil {
				t.Fatalf("env %s: Secret %s: %v", e.Name, ref.Name, err)
			}
			v, ok := s.Data[ref.Key]
			if !ok {
				t.Fatalf("env %s: Secret %s has no key %s", e.Name, ref.Name, ref.Key)
			}
			out = append(out, e.Name+"="+string(v))
		default:
			t.Fatalf("env %s: unsupported source %+v", e.Name, e.ValueFrom)
		}
	}
	return out
}

// emptyDirs gives every emptyDir volume the container of pod mounts a temporary folder, as the kubelet gives it a
// fresh folder, and rewrites the env values naming a mount path (env from jobEnv) to that folder. It returns the
// folders by mount path; a mount of a volume the pod does not declare, or of another kind, fails the test.
func emptyDirs(t *testing.T, pod corev1.PodSpec, c corev1.Container, env []string) map[string]string {
	t.Helper()
	dirs := map[string]string{}
	for _, m := range c.VolumeMounts {
		var vol *corev1.Volume
		for i := range pod.Volumes {
			if pod.Volumes[i].Name == m.Name {
				vol = &pod.Volumes[i]
			}
		}
		if vol == nil || vol.EmptyDir == nil {
			t.Fatalf("mount %s at %s: not an emptyDir volume of the pod (%+v)", m.Name, m.MountPath, vol)
		}
		dirs[m.MountPath] = t.TempDir()
	}
	for i, kv := range env {
		name, v, _ := strings.Cut(kv, "=")
		if d, ok := dirs[v]; ok {
			env[i] = name + "=" + d
		}
	}
	return dirs
}
