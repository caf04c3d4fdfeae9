package exporters

import (
	"bytes"
	"context"
	"fmt"
	"net/http"
	"os"
	"os/exec"
	"slices"
	"strings"
	"testing"
	"time"

	batchv1 "k8s.io/api/batch/v1"
	"sigs.k8s.io/controller-runtime/pkg/client"

	"kof.dev/kof/exporters/bucket"
	"kof.dev/kof/exporters/coldstorage"
	"kof.dev/kof/exporters/window"
	"kof.dev/kof/internal/testproc"
)

// TestColdStorageChartRunsTheExporter follows the user guide: the credentials Secret, `helm upgrade -i` of the
// chart with the guide's values, then the CronJob's job template run for real (the binary with the documented env)
// against VictoriaMetrics and MinIO; the newest closed hour lands at the documented key with its marker.
func TestColdStorageChartRunsTheExporter(t *testing.T) {
	vm, minio := testproc.VictoriaMetrics(t), testproc.MinIO(t)
	ctx := context.Background()
	b, err := bucket.Open(bucket.Config{Endpoint: minio.URL, Bucket: "kof-cold", UsePathStyle: true,
		AccessKey: testproc.MinIOAccessKey, SecretKey: testproc.MinIOSecretKey})
	if err != nil {
		t.Fatal(err)
	}
	if err := b.Create(ctx, false); err != nil {
		t.Fatal(err)
	}
	h := window.Of(time.Now()).Prev()
	var body bytes.Buffer
	for i := 0; i < 10; i++ {
		fmt.Fprintf(&body, "up{tenant=\"acme\",cluster=\"mothership\"} 1 %d\n", h.Start.Add(time.Duration(i)*time.Minute).UnixMilli())
	}
	resp, err := http.Post(vm.URL+"/api/v1/import/prometheus", "text/plain", &body) //nolint:noctx // loopback
	if err != nil {
		t.Fatal(err)
	}
	_ = resp.Body.Close()
	if r, err := http.Get(vm.URL + "/internal/force_flush"); err == nil { //nolint:noctx // loopback
		_ = r.Body.Close()
	}

	user := testproc.ExporterUser(t, minio, testproc.ColdStorageGuide, "kof-cold") // exactly the guide's policy
	createSecret(t, "cold-storage-exporter-s3-credentials", map[string]string{
		"S3_ACCESS_KEY": user.AccessKey, "S3_SECRET_KEY": user.SecretKey,
	})
	rel, err := helm().Install(ctx, installRelease("cold-storage-exporter", map[string]any{
		"sources":   "metrics",
		"endpoints": map[string]any{"metrics": vm.URL},
		"s3": map[string]any{
			"bucket": "kof-cold", "endpoint": minio.URL, "usePathStyle": true,
			"existingSecret": "cold-storage-exporter-s3-credentials",
		},
		"window": map[string]any{"delay": "0s", "catchUpHours": 2},
	}))
	if err != nil {
		t.Fatal(err)
	}
	if strings.Contains(rel.Manifest, user.SecretKey) {
		t.Fatal("the S3 secret key is in the Helm release manifest")
	}
	var cj batchv1.CronJob
	if err := cp.Client.Get(ctx, client.ObjectKey{Namespace: namespace, Name: "cold-storage-exporter"}, &cj); err != nil {
		t.Fatal(err)
	}
	pod := cj.Spec.JobTemplate.Spec.Template.Spec
	c := pod.Containers[0]
	cmd := exec.Command(buildBinary(t, "cold-storage-exporter"), c.Args...)
	cmd.Env = jobEnv(t, c)
	// The chart spills upload parts to its scratch emptyDir (SCRATCH_DIR), which the run must leave empty.
	scratch := emptyDirs(t, pod, c, cmd.Env)
	if len(scratch) != 1 || !slices.Contains(cmd.Env, "SCRATCH_DIR="+scratch["/scratch"]) {
		t.Fatalf("the job template mounts %v and sets %v; want SCRATCH_DIR naming its one emptyDir", c.VolumeMounts, cmd.Env)
	}
	var logs bytes.Buffer
	cmd.Stderr = &logs
	if err := cmd.Run(); err != nil {
		t.Fatalf("exporter with the job template's env: %v\n%s", err, logs.String())
	}
	folder := coldstorage.Folder("telemetry", "acme", "mothership", h, coldstorage.Metrics)
	key := folder + coldstorage.SamplesName
	if !strings.Contains(logs.String(), `"msg":"streaming parquet to S3","key":"`+key+`"`) {
		t.Errorf("logs lack the user guide's line for %s:\n%s", key, logs.String())
	}
	if strings.Contains(logs.String(), user.SecretKey) {
		t.Error("the S3 secret key is in the exporter's logs")
	}
	if left, err := os.ReadDir(scratch["/scratch"]); err != nil || len(left) != 0 {
		t.Errorf("scratch folder after the run: %v, %v; want it empty", left, err)
	}
	list, err := b.List(ctx, "telemetry/")
	if err != nil {
		t.Fatal(err)
	}
	var got []string
	for _, o := range list {
		got = append(got, o.Key)
	}
	want := []string{folder + coldstorage.SuccessName, folder + coldstorage.SamplesName, folder + coldstorage.SeriesName}
	if !slices.Equal(got, want) {
		t.Errorf("bucket holds %v; want exactly the folder's data files and marker %v", got, want)
	}
	if err := helm().Uninstall("cold-storage-exporter", namespace); err != nil {
		t.Error(err)
	}
}
