package harness

import (
	"os"
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

// Kill (the node's programs) ends a process that ignores SIGTERM at once and reports one that ended on its own.
func TestProcessKillEndsAtOnce(t *testing.T) {
	dir := t.TempDir()
	p, err := StartProcess("stubborn", "/bin/sh", filepath.Join(dir, "kubeconfig"),
		[]string{"-c", "trap '' TERM; sleep 30 & wait"}, nil, filepath.Join(dir, "stubborn.log"))
	if err != nil {
		t.Fatal(err)
	}
	start := time.Now()
	if err := p.Kill(); err != nil {
		t.Errorf("Kill of a running process: %v, want nil", err)
	}
	if d := time.Since(start); d > 5*time.Second {
		t.Errorf("Kill took %s, want an immediate end", d)
	}
	if _, ended := p.Exited(); !ended {
		t.Error("the process still runs after Kill")
	}
	q, err := StartProcess("false", "/bin/false", filepath.Join(dir, "kubeconfig"), nil, nil,
		filepath.Join(dir, "false.log"))
	if err != nil {
		t.Fatal(err)
	}
	for deadline := time.Now().Add(10 * time.Second); ; time.Sleep(20 * time.Millisecond) {
		if _, ended := q.Exited(); ended {
			break
		}
		if time.Now().After(deadline) {
			t.Fatal("/bin/false still runs after 10s")
		}
	}
	if err := q.Kill(); err == nil || !strings.Contains(err.Error(), "stopped on its own") {
		t.Errorf("Kill of an ended process: %v, want one saying it stopped on its own", err)
	}
}

// The Flux controllers of a run are thrown away with its control plane, so FluxControllers.Stop ends them at once:
// helm-controller exits with status 1 when a SIGTERM's --graceful-shutdown-timeout passes during an install that
// waits, which a graceful stop reported as a failed run (a stand-in here exits 1 on SIGTERM, as it does). A
// controller that had ended before is still reported.
func TestFluxStopEndsControllersThatFailAGracefulStop(t *testing.T) {
	dir := t.TempDir()
	start := func(name, script string) *Process {
		p, err := StartProcess(name, "/bin/sh", filepath.Join(dir, "kubeconfig"), []string{"-c", script}, nil,
			filepath.Join(dir, name+".log"))
		if err != nil {
			t.Fatal(err)
		}
		return p
	}
	// The stand-in tells when its trap is set (a SIGTERM before would end it by the signal).
	exitsOneOnTerm := func(name string) string {
		return "trap 'exit 1' TERM; : > " + filepath.Join(dir, name+".ready") + "; while :; do sleep 0.05; done"
	}
	f := &FluxControllers{Source: start("source-controller", exitsOneOnTerm("source")),
		Helm: start("helm-controller", exitsOneOnTerm("helm"))}
	for _, name := range []string{"source", "helm"} {
		for deadline := time.Now().Add(10 * time.Second); ; time.Sleep(20 * time.Millisecond) {
			if _, err := os.Stat(filepath.Join(dir, name+".ready")); err == nil {
				break
			}
			if time.Now().After(deadline) {
				t.Fatalf("the %s-controller stand-in set no trap within 10s", name)
			}
		}
	}
	if err := f.Stop(); err != nil {
		t.Errorf("Stop of running controllers that exit 1 on SIGTERM: %v, want nil", err)
	}
	for _, p := range []*Process{f.Source, f.Helm} {
		if _, ended := p.Exited(); !ended {
			t.Errorf("%s still runs after Stop", p.Name)
		}
	}
	g := &FluxControllers{Source: start("source-controller", exitsOneOnTerm("source2")),
		Helm: start("helm-controller", "exit 1")}
	for deadline := time.Now().Add(10 * time.Second); ; time.Sleep(20 * time.Millisecond) {
		if _, ended := g.Helm.Exited(); ended {
			break
		}
		if time.Now().After(deadline) {
			t.Fatal("the helm-controller stand-in still runs after 10s")
		}
	}
	if err := g.Stop(); err == nil || !strings.Contains(err.Error(), "helm-controller had stopped on its own") {
		t.Errorf("Stop with a controller that had ended: %v, want one saying helm-controller stopped on its own", err)
	}
}
