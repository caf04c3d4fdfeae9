package exporters

import (
	"bytes"
	"context"
	"path/filepath"
	"sort"
	"strings"
	"testing"

	batchv1 "k8s.io/api/batch/v1"
	corev1 "k8s.io/api/core/v1"
	"k8s.io/apimachinery/pkg/runtime"

	"kof.dev/kof/chartlib/render"
	"kof.dev/kof/chartlib/validate"
	"kof.dev/kof/internal/golden"
)

// namespace is the release namespace, as in the user guide's `helm upgrade -i -n kof`.
const namespace = "kof"

func chartDir(chart string) string { return filepath.Join("..", "..", "..", "charts", chart) }

// goldenCase is one golden render: a chart with one ci/ values file.
type goldenCase struct{ chart, name, file string }

// goldenCases lists every ci/NN-*-values.yaml file of the charts in semantic, sorted.
func goldenCases(t *testing.T) []goldenCase {
	t.Helper()
	var out []goldenCase
	for _, c := range exporterCharts {
		files, err := filepath.Glob(filepath.Join(chartDir(c), "ci", "*-values.yaml"))
		if err != nil {
			t.Fatal(err)
		}
		sort.Strings(files)
		for _, f := range files {
			out = append(out, goldenCase{chart: c, name: strings.TrimSuffix(filepath.Base(f), "-values.yaml"), file: f})
		}
	}
	return out
}

func renderFile(t *testing.T, chart, file string) *render.Result {
	t.Helper()
	res, err := render.Render(context.Background(), render.Options{
		ChartDir: chartDir(chart), ReleaseName: chart, Namespace: namespace, ValuesFiles: []string{file}, Strict: true,
	})
	if err != nil {
		t.Fatalf("render %s with %s: %v", chart, file, err)
	}
	return res
}

// TestGolden renders every case, compares it with its golden file, checks that a second render is identical,
// validates the objects against the upstream API types and runs the case's semantic assertions.
func TestGolden(t *testing.T) {
	seen := map[string]bool{}
	for _, gc := range goldenCases(t) {
		key := gc.chart + "/" + gc.name
		seen[key] = true
		t.Run(key, func(t *testing.T) {
			res := renderFile(t, gc.chart, gc.file)
			got, err := res.YAML()
			if err != nil {
				t.Fatal(err)
			}
			again, err := renderFile(t, gc.chart, gc.file).YAML()
			if err != nil {
				t.Fatal(err)
			}
			if !bytes.Equal(got, again) {
				t.Errorf("two renders of %s differ", key)
			}
			golden.Assert(t, filepath.Join("testdata", "golden", key+".yaml"), got)
			findings, err := validate.Objects(res.Set)
			if err != nil {
				t.Fatal(err)
			}
			for _, f := range findings {
				t.Errorf("validate: %s", f)
			}
			check, ok := semantic[key]
			if !ok {
				t.Fatalf("no semantic assertions for %s: add them to the semantic table", key)
			}
			check(t, res)
		})
	}
	for key := range semantic {
		if !seen[key] {
			t.Errorf("semantic assertions for %s but no such chart or ci file", key)
		}
	}
}

// TestDefaultsNeedABucket checks that the chart defaults alone fail, naming s3.bucket.
func TestDefaultsNeedABucket(t *testing.T) {
	for _, c := range exporterCharts {
		_, err := render.Render(context.Background(), render.Options{ChartDir: chartDir(c), ReleaseName: c, Namespace: namespace, Strict: true})
		if err == nil || !strings.Contains(err.Error(), "s3.bucket is required") {
			t.Errorf("%s with defaults: %v; want an error naming s3.bucket", c, err)
		}
	}
}

// cronJob returns the release's CronJob as a typed object.
func cronJob(t *testing.T, res *render.Result, name string) *batchv1.CronJob {
	t.Helper()
	obj, err := res.MustGet("CronJob", namespace, name)
	if err != nil {
		t.Fatal(err)
	}
	var cj batchv1.CronJob
	if err := runtime.DefaultUnstructuredConverter.FromUnstructured(obj.Object, &cj); err != nil {
		t.Fatal(err)
	}
	return &cj
}

// envOf returns the container's env by name.
func envOf(c corev1.Container) map[string]corev1.EnvVar {
	out := map[string]corev1.EnvVar{}
	for _, e := range c.Env {
		out[e.Name] = e
	}
	return out
}

// checkCronJob asserts what every exporter CronJob must be: hourly-style schedule in UTC, Forbid, deadlines,
// history limits, restricted pod security, the ServiceAccount, and the image.
func checkCronJob(t *testing.T, cj *batchv1.CronJob, image string) corev1.Container {
	t.Helper()
	s := cj.Spec
	if s.ConcurrencyPolicy != batchv1.ForbidConcurrent || s.StartingDeadlineSeconds == nil || s.SuccessfulJobsHistoryLimit == nil ||
		s.FailedJobsHistoryLimit == nil || s.JobTemplate.Spec.ActiveDeadlineSeconds == nil || s.TimeZone == nil || *s.TimeZone != "Etc/UTC" {
		t.Errorf("CronJob %s: want Forbid, UTC, starting and active deadlines and history limits; got %+v", cj.Name, s)
	}
	pod := s.JobTemplate.Spec.Template.Spec
	sc := pod.SecurityContext
	if sc == nil || sc.RunAsNonRoot == nil || !*sc.RunAsNonRoot || sc.SeccompProfile == nil || sc.SeccompProfile.Type != corev1.SeccompProfileTypeRuntimeDefault {
		t.Errorf("CronJob %s: pod security context %+v is not restricted", cj.Name, sc)
	}
	if len(pod.Containers) != 1 {
		t.Fatalf("CronJob %s: %d containers, want 1", cj.Name, len(pod.Containers))
	}
	c := pod.Containers[0]
	csc := c.SecurityContext
	if csc == nil || csc.AllowPrivilegeEscalation == nil || *csc.AllowPrivilegeEscalation || csc.ReadOnlyRootFilesystem == nil ||
		!*csc.ReadOnlyRootFilesystem || csc.Capabilities == nil || len(csc.Capabilities.Drop) != 1 || csc.Capabilities.Drop[0] != "ALL" {
		t.Errorf("CronJob %s: container security context %+v is not restricted", cj.Name, csc)
	}
	if image != "" && c.Image != image {
		t.Errorf("CronJob %s: image %s, want %s", cj.Name, c.Image, image)
	}
	if pod.ServiceAccountName == "" || pod.RestartPolicy != corev1.RestartPolicyNever {
		t.Errorf("CronJob %s: service account %q, restart policy %s", cj.Name, pod.ServiceAccountName, pod.RestartPolicy)
	}
	return c
}

// noInlineSecrets fails when a container env value holds a secret (keys only by reference).
func noInlineSecrets(t *testing.T, c corev1.Container, names ...string) {
	t.Helper()
	env := envOf(c)
	for _, n := range names {
		if e, ok := env[n]; ok && (e.Value != "" || e.ValueFrom == nil || e.ValueFrom.SecretKeyRef == nil) {
			t.Errorf("env %s is not a Secret reference: %+v", n, e)
		}
	}
}

// objectsOfKind returns the names of the objects of kind.
func objectsOfKind(res *render.Result, kind string) []string {
	var out []string
	for _, o := range res.OfKind(kind) {
		out = append(out, o.GetName())
	}
	return out
}
