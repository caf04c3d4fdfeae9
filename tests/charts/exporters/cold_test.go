package exporters

import (
	"testing"

	batchv1 "k8s.io/api/batch/v1"
	corev1 "k8s.io/api/core/v1"

	"kof.dev/kof/chartlib/render"
)

// exporterCharts are the charts of this package.
var exporterCharts = []string{"cold-storage-exporter", "audit-logs-exporter"}

// semantic holds the assertions of every golden case, keyed `<chart>/<case>`.
var semantic = map[string]func(t *testing.T, res *render.Result){
	"cold-storage-exporter/01-minio":               checkColdMinIO,
	"cold-storage-exporter/02-aws-irsa":            checkColdIRSA,
	"cold-storage-exporter/03-test-credentials":    checkColdTestCredentials,
	"audit-logs-exporter/01-minio":                 checkAuditMinIO,
	"audit-logs-exporter/02-compliance-irsa":       checkAuditComplianceIRSA,
	"audit-logs-exporter/03-hmac-test-credentials": checkAuditHMAC,
}

func checkColdMinIO(t *testing.T, res *render.Result) {
	c := checkCronJob(t, cronJob(t, res, "cold-storage-exporter"), "ghcr.io/k0rdent/kof/cold-storage-exporter:2.0.0")
	env := envOf(c)
	want := map[string]string{
		"SOURCES": "metrics,logs", "S3_BUCKET": "kof-cold", "S3_ENDPOINT": "http://minio.minio:9000", "S3_USE_PATH_STYLE": "true",
		"S3_PREFIX": "telemetry", "METRICS_URL": "http://vmselect-cluster:8481/select/0/prometheus", "LEASE": "",
		"LOGS_CLUSTER_FIELD": "k8s.cluster.name", "METRICS_CLUSTER_LABEL": "cluster",
	}
	for k, v := range want {
		if env[k].Value != v {
			t.Errorf("env %s = %q, want %q", k, env[k].Value, v)
		}
	}
	noInlineSecrets(t, c, "S3_ACCESS_KEY", "S3_SECRET_KEY")
	if ref := env["S3_ACCESS_KEY"].ValueFrom.SecretKeyRef; ref.Name != "cold-storage-exporter-s3-credentials" || ref.Key != "S3_ACCESS_KEY" {
		t.Errorf("S3_ACCESS_KEY from %s/%s, want the user guide's Secret cold-storage-exporter-s3-credentials", ref.Name, ref.Key)
	}
	if s := objectsOfKind(res, "Secret"); len(s) != 0 {
		t.Errorf("existingSecret set: the chart renders Secrets %v", s)
	}
	checkScratch(t, cronJob(t, res, "cold-storage-exporter"), c)
}

// checkScratch checks the default scratch volume: SCRATCH_DIR is the mount path of a disk-backed emptyDir (not
// tmpfs, whose pages would count as the pod's memory) of the default size limit, writable under the read-only root
// filesystem.
func checkScratch(t *testing.T, cj *batchv1.CronJob, c corev1.Container) {
	t.Helper()
	dir := envOf(c)["SCRATCH_DIR"].Value
	if dir == "" {
		t.Fatal("SCRATCH_DIR unset: scratch.enabled is true by default")
	}
	var mounted string
	for _, m := range c.VolumeMounts {
		if m.MountPath == dir && !m.ReadOnly {
			mounted = m.Name
		}
	}
	var vol *corev1.Volume
	for i, v := range cj.Spec.JobTemplate.Spec.Template.Spec.Volumes {
		if v.Name == mounted {
			vol = &cj.Spec.JobTemplate.Spec.Template.Spec.Volumes[i]
		}
	}
	if vol == nil || vol.EmptyDir == nil {
		t.Fatalf("SCRATCH_DIR %s is not a writable mount of an emptyDir volume (mounts %v)", dir, c.VolumeMounts)
	}
	if vol.EmptyDir.Medium != corev1.StorageMediumDefault || vol.EmptyDir.SizeLimit == nil || vol.EmptyDir.SizeLimit.String() != "64Mi" {
		t.Errorf("scratch emptyDir %+v; want disk-backed with sizeLimit 64Mi", vol.EmptyDir)
	}
}

func checkColdIRSA(t *testing.T, res *render.Result) {
	c := checkCronJob(t, cronJob(t, res, "cold-storage-exporter"), "registry.example.com/k0rdent/kof/cold-storage-exporter:2.0.0")
	env := envOf(c)
	if _, ok := env["S3_ACCESS_KEY"]; ok {
		t.Error("no Secret: S3_ACCESS_KEY must be absent so the default AWS credential chain is used")
	}
	if env["S3_REGION"].Value != "eu-west-1" || env["WINDOW_DELAY"].Value != "20m" || env["CATCH_UP_HOURS"].Value != "48" {
		t.Errorf("env = %v", env)
	}
	sa, err := res.MustGet("ServiceAccount", namespace, "cold-storage-exporter")
	if err != nil {
		t.Fatal(err)
	}
	if sa.GetAnnotations()["eks.amazonaws.com/role-arn"] == "" {
		t.Error("ServiceAccount lacks the IRSA role annotation")
	}
	pod := cronJob(t, res, "cold-storage-exporter").Spec.JobTemplate.Spec.Template.Spec
	if _, ok := env["SCRATCH_DIR"]; ok || len(pod.Volumes) != 0 || len(c.VolumeMounts) != 0 {
		t.Errorf("scratch.enabled false: SCRATCH_DIR %v, volumes %v, mounts %v; want none (parts in memory)", env["SCRATCH_DIR"], pod.Volumes, c.VolumeMounts)
	}
}

func checkColdTestCredentials(t *testing.T, res *render.Result) {
	c := checkCronJob(t, cronJob(t, res, "cold-storage-exporter"), "ghcr.io/k0rdent/kof/cold-storage-exporter:2.0.0-rc.1")
	noInlineSecrets(t, c, "S3_ACCESS_KEY", "S3_SECRET_KEY")
	sec, err := res.MustGet("Secret", namespace, "cold-storage-exporter-s3-credentials")
	if err != nil {
		t.Fatal(err)
	}
	data, _ := sec.Object["stringData"].(map[string]any)
	if data["S3_ACCESS_KEY"] != "test-access" || data["S3_SECRET_KEY"] != "test-secret" {
		t.Errorf("test Secret data = %v", data)
	}
	if envOf(c)["S3_INSECURE_SKIP_VERIFY"].Value != "true" {
		t.Error("S3_INSECURE_SKIP_VERIFY not passed")
	}
}
