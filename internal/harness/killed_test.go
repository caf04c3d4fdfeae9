package harness

import (
	"bufio"
	"context"
	"fmt"
	"os"
	"os/exec"
	"path/filepath"
	"slices"
	"strings"
	"syscall"
	"testing"
	"time"

	"github.com/go-logr/logr"
	ctrllog "sigs.k8s.io/controller-runtime/pkg/log"

	"kof.dev/kof/internal/proc"
)

// helperDemoEnv, when set to a folder, makes this test binary run the demo there instead of the tests (the child of
// TestKilledDemoLeavesNoProcess); helperBinEnv names the folder of programs it may use.
const (
	helperDemoEnv = "KOF_HARNESS_HELPER_DEMO"
	helperBinEnv  = "KOF_HARNESS_HELPER_BIN"
)

// readyFile is written by the helper once the demo's summary is printed and everything still runs.
const readyFile = "ready"

func TestMain(m *testing.M) {
	if dir := os.Getenv(helperDemoEnv); dir != "" {
		os.Exit(runHelperDemo(dir, os.Getenv(helperBinEnv)))
	}
	if dir := os.Getenv(helperNodeEnv); dir != "" {
		os.Exit(runHelperNode(dir))
	}
	os.Exit(m.Run())
}

// runHelperDemo runs the demo of scenario 01 with the programs of binDir, writes readyFile into dir when the summary
// is out, and holds everything running until the process is killed.
func runHelperDemo(dir, binDir string) int {
	ctrllog.SetLogger(logr.Discard())
	root, err := filepath.Abs(filepath.Join("..", ".."))
	if err != nil {
		fmt.Fprintln(os.Stderr, err)
		return 1
	}
	res, err := Demo(context.Background(), DemoOptions{Root: root, BinDir: binDir,
		ScenariosDir: filepath.Join(root, "tests", "scenarios", "testdata"), Scenario: "01-regional-child",
		OutDir: filepath.Join(dir, "out"), Out: os.Stdout,
		Hold: func(string) error {
			if err := os.WriteFile(filepath.Join(dir, readyFile), nil, 0o644); err != nil {
				return err
			}
			select {} // until killed
		}})
	if err != nil {
		fmt.Fprintln(os.Stderr, err)
		return 1
	}
	if res.Failed() {
		fmt.Fprintln(os.Stderr, "the demo reported problems")
		return 1
	}
	return 0
}

// toolsOf returns the tools of ci/tools/targets.tsv (under root) whose targets include target.
func toolsOf(t *testing.T, root, target string) []string {
	t.Helper()
	f, err := os.Open(filepath.Join(root, "ci", "tools", "targets.tsv"))
	if err != nil {
		t.Fatal(err)
	}
	defer f.Close()
	var out []string
	sc := bufio.NewScanner(f)
	for sc.Scan() {
		cols := strings.Split(sc.Text(), "\t")
		if strings.HasPrefix(sc.Text(), "#") || len(cols) < 3 {
			continue
		}
		if slices.Contains(strings.Fields(cols[2]), target) {
			out = append(out, cols[0])
		}
	}
	if err := sc.Err(); err != nil {
		t.Fatal(err)
	}
	if len(out) == 0 {
		t.Fatalf("ci/tools/targets.tsv lists no tool for %s", target)
	}
	return out
}

// The demo runs with only the tools of its row in ci/tools/targets.tsv (a tool it starts but the row lacks is
// missing from the folder and fails the demo, so `make demo` on a fresh machine would fail the same way), and a
// SIGKILL of the process running it (what a `go test` timeout or an OOM kill does) leaves none of its processes:
// kube-apiserver, etcd, the Flux controllers and the kof-operator end within seconds, and the next run removes the
// killed run's scratch folder. KCM runs in it and removes none of KOF's HelmReleases.
func TestKilledDemoLeavesNoProcess(t *testing.T) {
	root, err := filepath.Abs(filepath.Join("..", ".."))
	if err != nil {
		t.Fatal(err)
	}
	bin := t.TempDir()
	for _, tool := range toolsOf(t, root, "demo") {
		if err := os.Symlink(filepath.Join(root, "bin", tool), filepath.Join(bin, tool)); err != nil {
			t.Fatal(err)
		}
	}
	dir := t.TempDir()
	// The demo's temporary folder is one of its own: after its SIGKILL and the next run's sweep it must be empty
	// (regression: envtest's serving-certificate folder was created beside the scratch folder and stayed).
	tmp := t.TempDir()
	self, err := os.Executable()
	if err != nil {
		t.Fatal(err)
	}
	cmd := exec.Command(self)
	cmd.Env = append(os.Environ(), helperDemoEnv+"="+dir, helperBinEnv+"="+bin, "TMPDIR="+tmp)
	logPath := filepath.Join(dir, "helper.log")
	log, err := os.Create(logPath)
	if err != nil {
		t.Fatal(err)
	}
	defer log.Close()
	cmd.Stdout, cmd.Stderr = log, log
	proc.DieWithParent(cmd)
	if err := cmd.Start(); err != nil {
		t.Fatal(err)
	}
	exited := make(chan error, 1)
	go func() { exited <- cmd.Wait() }()
	t.Cleanup(func() { _ = cmd.Process.Kill() })

	deadline := time.Now().Add(5 * time.Minute)
	for {
		if _, err := os.Stat(filepath.Join(dir, readyFile)); err == nil {
			break
		}
		select {
		case err := <-exited:
			t.Fatalf("the demo with only the demo's tools (%s) ended before its summary: %v\n%s", bin, err,
				tail(logPath, 30))
		case <-time.After(250 * time.Millisecond):
		}
		if time.Now().After(deadline) {
			t.Fatalf("no demo summary within 5 minutes:\n%s", tail(logPath, 30))
		}
	}
	// KCM ran from the demo's start to its summary: it removed none of the umbrella's HelmReleases (Demo fails
	// otherwise) and reported its verdict on the templates.
	helperLog, err := os.ReadFile(logPath)
	if err != nil {
		t.Fatal(err)
	}
	for _, want := range []string{"KCM removed none of KOF's", "ServiceTemplateChains valid"} {
		if !strings.Contains(string(helperLog), want) {
			t.Errorf("the demo's output lacks %q:\n%s", want, tail(logPath, 30))
		}
	}
	children, err := proc.Descendants(cmd.Process.Pid)
	if err != nil {
		t.Fatal(err)
	}
	var names []string
	for _, c := range children {
		names = append(names, c.Comm)
	}
	for _, want := range []string{"etcd", "kube-apiserver", SourceController, HelmController, KCM, "kof-operator"} {
		if !slices.Contains(names, want[:min(len(want), 15)]) { // /proc's comm keeps 15 bytes
			t.Errorf("the running demo has no %s process (processes: %v)", want, names)
		}
	}
	scratch, _ := filepath.Glob(filepath.Join(tmp, fmt.Sprintf("kof-scratch-%d-demo-*", cmd.Process.Pid)))
	if len(scratch) != 1 {
		t.Errorf("the demo's scratch folders: %v, want one", scratch)
	}

	if err := cmd.Process.Signal(syscall.SIGKILL); err != nil {
		t.Fatal(err)
	}
	<-exited
	gone := time.Now().Add(10 * time.Second)
	for {
		var left []string
		for _, c := range children {
			if proc.Alive(c.PID) {
				left = append(left, fmt.Sprintf("%s (pid %d)", c.Comm, c.PID))
			}
		}
		if len(left) == 0 {
			break
		}
		if time.Now().After(gone) {
			t.Fatalf("10 s after SIGKILL of the demo these of its processes still run: %v", left)
		}
		time.Sleep(100 * time.Millisecond)
	}
	if err := proc.Sweep(tmp); err != nil {
		t.Fatal(err)
	}
	for _, s := range scratch {
		if _, err := os.Stat(s); !os.IsNotExist(err) {
			t.Errorf("the killed demo's scratch folder %s is still there after the next run's sweep (%v)", s, err)
		}
	}
	left, err := os.ReadDir(tmp)
	if err != nil {
		t.Fatal(err)
	}
	for _, e := range left {
		t.Errorf("the killed demo left %s in its temporary folder %s, outside its scratch folder", e.Name(), tmp)
	}
}
