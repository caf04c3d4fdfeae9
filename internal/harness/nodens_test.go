package harness

import (
	"fmt"
	"os"
	"os/exec"
	"path/filepath"
	"strconv"
	"strings"
	"syscall"
	"testing"
	"time"

	"kof.dev/kof/internal/proc"
)

// helperNodeEnv, when set to a folder, makes this test binary run runHelperNode there instead of the tests.
const helperNodeEnv = "KOF_HARNESS_HELPER_NODE"

// runHelperNode runs inside the node's namespaces (RunInNode) a process of its own (sleep), writes into dir a file
// naming the node's scratch folder, its cgroup and the host PID of nothing but itself, and holds until killed.
func runHelperNode(dir string) int {
	return RunInNode("node-helper", func() int {
		node, _ := InNode()
		sleep := exec.Command("sleep", "1000")
		proc.DieWithParent(sleep)
		if err := sleep.Start(); err != nil {
			fmt.Fprintln(os.Stderr, err)
			return 1
		}
		info := node + "\n" + os.Getenv(nodeCgroupEnv) + "\n"
		if err := os.WriteFile(filepath.Join(dir, readyFile), []byte(info), 0o644); err != nil {
			fmt.Fprintln(os.Stderr, err)
			return 1
		}
		for {
			time.Sleep(time.Hour) // until killed
		}
	})
}

// startHelperNode starts the helper and returns it with its scratch folder and cgroup name once it runs inside its
// namespaces.
func startHelperNode(t *testing.T) (*exec.Cmd, chan error, string, string) {
	t.Helper()
	dir := t.TempDir()
	self, err := os.Executable()
	if err != nil {
		t.Fatal(err)
	}
	cmd := exec.Command(self, "-test.run=^$")
	cmd.Env = append(os.Environ(), helperNodeEnv+"="+dir)
	out, err := os.Create(filepath.Join(dir, "helper.log"))
	if err != nil {
		t.Fatal(err)
	}
	t.Cleanup(func() { _ = out.Close() })
	cmd.Stdout, cmd.Stderr = out, out
	proc.DieWithParent(cmd)
	if err := cmd.Start(); err != nil {
		t.Fatal(err)
	}
	exited := make(chan error, 1)
	go func() { exited <- cmd.Wait() }()
	t.Cleanup(func() { _ = cmd.Process.Kill() })
	deadline := time.Now().Add(time.Minute)
	for {
		if b, err := os.ReadFile(filepath.Join(dir, readyFile)); err == nil && strings.Count(string(b), "\n") == 2 {
			lines := strings.Split(string(b), "\n")
			return cmd, exited, lines[0], strings.TrimPrefix(lines[1], "/")
		}
		select {
		case err := <-exited:
			b, _ := os.ReadFile(out.Name())
			t.Fatalf("the helper ended before it ran inside its namespaces: %v\n%s", err, b)
		case <-time.After(50 * time.Millisecond):
		}
		if time.Now().After(deadline) {
			t.Fatal("the helper did not run inside its namespaces within a minute")
		}
	}
}

// cgroupExists reports whether the cgroup folder name exists in any hierarchy.
func cgroupExists(name string) bool {
	for _, h := range cgroupHierarchies() {
		if _, err := os.Stat(filepath.Join(h, name)); err == nil {
			return true
		}
	}
	return false
}

// waitGone waits until none of procs runs, failing the test after 15 s.
func waitGone(t *testing.T, what string, procs []proc.Descendant) {
	t.Helper()
	deadline := time.Now().Add(15 * time.Second)
	for {
		var left []string
		for _, c := range procs {
			if proc.Alive(c.PID) {
				left = append(left, c.Comm+" (pid "+strconv.Itoa(c.PID)+")")
			}
		}
		if len(left) == 0 {
			return
		}
		if time.Now().After(deadline) {
			t.Fatalf("15 s after %s these processes still run: %v", what, left)
		}
		time.Sleep(50 * time.Millisecond)
	}
}

// RunInNode's namespaces hold every process started inside them: SIGINT to the program that ran RunInNode (a
// Ctrl-C) ends all of them and removes the node's scratch folder and cgroup; SIGKILL (a `go test` timeout) ends all
// of them too, and the next run's sweeps remove the scratch folder and cgroup left behind.
func TestNodeNamespacesEndWithTheirProgram(t *testing.T) {
	for _, sig := range []syscall.Signal{syscall.SIGINT, syscall.SIGKILL} {
		t.Run(sig.String(), func(t *testing.T) {
			cmd, exited, scratch, cgroup := startHelperNode(t)
			kids, err := proc.Descendants(cmd.Process.Pid)
			if err != nil {
				t.Fatal(err)
			}
			var names []string
			for _, k := range kids {
				names = append(names, k.Comm)
			}
			for _, want := range []string{"unshare", "sh", "nsenter", "sleep"} {
				if !strings.Contains(strings.Join(names, " "), want) {
					t.Errorf("the helper's processes %v have no %s", names, want)
				}
			}
			if !cgroupExists(cgroup) {
				t.Errorf("no cgroup %s while the node runs", cgroup)
			}
			if err := cmd.Process.Signal(sig); err != nil {
				t.Fatal(err)
			}
			<-exited
			waitGone(t, sig.String()+" of the helper", kids)
			if sig == syscall.SIGKILL {
				if err := proc.Sweep(filepath.Dir(scratch)); err != nil {
					t.Fatal(err)
				}
				if err := SweepCgroups(); err != nil {
					t.Fatal(err)
				}
			}
			if _, err := os.Stat(scratch); !os.IsNotExist(err) {
				t.Errorf("the node's scratch folder %s is still there after %s (%v)", scratch, sig, err)
			}
			if cgroupExists(cgroup) {
				t.Errorf("the node's cgroup %s is still there after %s", cgroup, sig)
			}
		})
	}
}
