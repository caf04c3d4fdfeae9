package harness

import (
	"path/filepath"
	"strings"
	"testing"
	"time"
)

func TestOperatorStopEndsARunningProcess(t *testing.T) {
	dep := deployment(nil, "30")
	op, err := StartOperator("/bin/sleep", filepath.Join(t.TempDir(), "kubeconfig"), dep,
		filepath.Join(t.TempDir(), "op.log"))
	if err != nil {
		t.Fatal(err)
	}
	if err, ended := op.Exited(); ended {
		t.Fatalf("process ended at once: %v", err)
	}
	start := time.Now()
	if err := op.Stop(); err != nil {
		t.Errorf("Stop of a process ended by SIGTERM: %v, want nil", err)
	}
	if d := time.Since(start); d >= processStopGrace {
		t.Errorf("Stop took %s; SIGTERM should end sleep at once", d)
	}
}

func TestOperatorStopReportsAProcessThatEndedOnItsOwn(t *testing.T) {
	op, err := StartOperator("/bin/false", filepath.Join(t.TempDir(), "kubeconfig"), deployment(nil),
		filepath.Join(t.TempDir(), "op.log"))
	if err != nil {
		t.Fatal(err)
	}
	deadline := time.Now().Add(10 * time.Second)
	for {
		if _, ended := op.Exited(); ended {
			break
		}
		if time.Now().After(deadline) {
			t.Fatal("/bin/false still runs after 10s")
		}
		time.Sleep(20 * time.Millisecond)
	}
	err = op.Stop()
	if err == nil || !strings.Contains(err.Error(), "stopped on its own") {
		t.Fatalf("Stop error = %v, want one saying the operator stopped on its own", err)
	}
}
