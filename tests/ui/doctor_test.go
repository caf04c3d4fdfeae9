package ui

import (
	"bytes"
	"encoding/json"
	"fmt"
	"os"
	"os/exec"
	"path/filepath"
	"strings"
	"testing"
	"time"

	"kof.dev/kof/doctor/diagnose"
)

// settleWait bounds the wait for the operator to finish reacting to the last change before the doctor's verdict.
const settleWait = 60 * time.Second

// doctor runs the built kof doctor against the demo control plane and returns its exit code and output.
func doctor(t *testing.T, args ...string) (int, string) {
	t.Helper()
	cmd := exec.Command(shared.kof, append([]string{"doctor", "--kubeconfig", shared.session.ControlPlane.Kubeconfig},
		args...)...)
	cmd.Dir = shared.root
	var out, errOut bytes.Buffer
	cmd.Stdout, cmd.Stderr = &out, &errOut
	err := cmd.Run()
	code := 0
	if ee, ok := err.(*exec.ExitError); ok {
		code = ee.ExitCode()
	} else if err != nil {
		t.Fatalf("run kof doctor: %v", err)
	}
	return code, out.String() + errOut.String()
}

// diagnosis runs kof doctor -o json and decodes it; any failure fails the test.
func diagnosis(t *testing.T, args ...string) (int, *diagnose.Diagnosis) {
	t.Helper()
	code, d, err := tryDiagnosis(args...)
	if err != nil {
		t.Fatal(err)
	}
	return code, d
}

// tryDiagnosis runs kof doctor -o json and decodes it. Errors: the binary cannot run, or its output is no diagnosis
// (a read of the cluster that failed: the error carries kof doctor's stderr).
func tryDiagnosis(args ...string) (int, *diagnose.Diagnosis, error) {
	cmd := exec.Command(shared.kof, append([]string{"doctor", "-o", "json", "--kubeconfig",
		shared.session.ControlPlane.Kubeconfig}, args...)...)
	cmd.Dir = shared.root
	var stderr bytes.Buffer
	cmd.Stderr = &stderr
	out, err := cmd.Output()
	code := 0
	if ee, ok := err.(*exec.ExitError); ok {
		code = ee.ExitCode()
	} else if err != nil {
		return 0, nil, fmt.Errorf("run kof doctor: %w", err)
	}
	var d diagnose.Diagnosis
	if err := json.Unmarshal(out, &d); err != nil {
		return code, nil, fmt.Errorf("kof doctor -o json (exit %d): %v\n%s%s", code, err, out, stderr.String())
	}
	return code, &d, nil
}

// wrong lists the error and warning findings of the clusters named (all but those when except is set), except
// PromxyNotRunning: this control plane has no nodes, so no promxy pod ever runs (TestDoctorBrokenChild asserts that
// finding where it belongs).
func wrong(d *diagnose.Diagnosis, names []string, except bool) []string {
	var out []string
	for _, c := range d.Clusters {
		listed := false
		for _, n := range names {
			listed = listed || c.Name == n
		}
		if listed == except {
			continue
		}
		for _, f := range c.Findings {
			if f.Severity != diagnose.SeverityInfo && f.Code != diagnose.CodePromxyNotRunning {
				out = append(out, f.String())
			}
		}
	}
	for _, f := range d.Findings {
		if f.Severity != diagnose.SeverityInfo {
			out = append(out, f.String())
		}
	}
	return out
}

// settled runs kof doctor until the clusters other than broken report nothing wrong (the operator may still be
// reconciling the last change) and returns that diagnosis; it fails the test with the last findings otherwise.
func settled(t *testing.T, broken ...string) *diagnose.Diagnosis {
	t.Helper()
	deadline := time.Now().Add(settleWait)
	for {
		_, d, err := tryDiagnosis()
		var bad []string
		if err != nil {
			bad = []string{err.Error()} // the cluster may be readable on the next try
		} else if bad = wrong(d, broken, true); len(bad) == 0 {
			return d
		}
		if time.Now().After(deadline) {
			t.Fatalf("after %s the healthy clusters still have findings:\n%s", settleWait, strings.Join(bad, "\n"))
		}
		time.Sleep(time.Second)
	}
}

// Scenario 01 plus child-3, a child no rule binds to a regional: kof doctor names child-3, the field and the fix,
// exits 1, and finds nothing wrong with mgmt, regional-1, child-1 and child-2.
func TestDoctorBrokenChild(t *testing.T) {
	d := settled(t, "child-3")
	c := d.Cluster("child-3")
	if c == nil || len(c.Findings) == 0 {
		t.Fatalf("kof doctor reports nothing about child-3: %+v", c)
	}
	var promxy []diagnose.Finding
	for _, c := range d.Clusters {
		for _, f := range c.Findings {
			if f.Code == diagnose.CodePromxyNotRunning {
				promxy = append(promxy, f)
			}
		}
	}
	if len(promxy) != 1 || promxy[0].Cluster != "mgmt" || promxy[0].Severity != diagnose.SeverityWarning ||
		!strings.Contains(promxy[0].Message, "no Running promxy pod") {
		t.Errorf("PromxyNotRunning findings %+v, want one warning on mgmt (no node runs the promxy pod here)", promxy)
	}
	f := c.Findings[0]
	want := diagnose.Finding{Code: diagnose.CodeNoRegional, Severity: diagnose.SeverityError, Cluster: "child-3",
		Object: "ClusterDeployment kcm-system/child-3", Field: "metadata.labels",
		Message: "no regional: no regional cluster in the same aws region ap-south-1",
		Fix: "set k0rdent.mirantis.com/kof-regional-cluster-name (and k0rdent.mirantis.com/kof-regional-cluster-namespace " +
			"if the regional is in another namespace), or use the same aws region as a regional (regional-1: aws us-east-2)"}
	if f != want {
		t.Errorf("child-3's first finding\n got %+v\nwant %+v", f, want)
	}
	for _, name := range []string{"child-1", "child-2"} {
		if got := d.Cluster(name).Regional; got != "kcm-system/regional-1" {
			t.Errorf("%s regional %q, want kcm-system/regional-1", name, got)
		}
	}
	code, out := doctor(t)
	if code != 1 {
		t.Errorf("kof doctor exit %d, want 1:\n%s", code, out)
	}
	writeOut(t, "doctor.txt", []byte(out))
	for _, line := range []string{
		"error   child-3: no regional: no regional cluster in the same aws region ap-south-1 [NoRegional]",
		"        ClusterDeployment kcm-system/child-3 metadata.labels",
		"        fix: set k0rdent.mirantis.com/kof-regional-cluster-name",
	} {
		if !strings.Contains(out, line) {
			t.Errorf("kof doctor output lacks %q:\n%s", line, out)
		}
	}
	if code, out := doctor(t, "child-1"); code != 0 || strings.Contains(out, "child-3") {
		t.Errorf("kof doctor child-1: exit %d, want 0 and nothing about child-3:\n%s", code, out)
	}
	if code, out := doctor(t, "kcm-system/child-3"); code != 1 || !strings.Contains(out, "[NoRegional]") {
		t.Errorf("kof doctor kcm-system/child-3: exit %d, want 1 with the finding:\n%s", code, out)
	}
	if code, out := doctor(t, "child-9"); code != 2 || !strings.Contains(out, "known: mgmt/mgmt, kcm-system/child-1") {
		t.Errorf("kof doctor child-9: exit %d, want 2 listing the known clusters:\n%s", code, out)
	}
}

// writeOut writes data to out/ui/name for the documentation.
func writeOut(t *testing.T, name string, data []byte) {
	t.Helper()
	dir := filepath.Join(shared.root, "out", "ui")
	if err := os.MkdirAll(dir, 0o755); err != nil {
		t.Fatal(err)
	}
	if err := os.WriteFile(filepath.Join(dir, name), data, 0o644); err != nil {
		t.Fatal(err)
	}
}
