package ui

import (
	"bufio"
	"io"
	"os"
	"os/exec"
	"regexp"
	"strings"
	"syscall"
	"testing"
	"time"

	"kof.dev/kof/internal/proc"
)

// serverWait bounds the wait for a started server to print its URL.
const serverWait = 30 * time.Second

// startServer starts bin in the repository root with args and env, waits until it prints a line matching
// urlPattern and returns the match; the process is interrupted and waited for when the test ends.
func startServer(t *testing.T, bin string, args, env []string, urlPattern *regexp.Regexp) string {
	t.Helper()
	cmd := exec.Command(bin, args...)
	cmd.Dir = shared.root
	cmd.Env = append(os.Environ(), env...)
	stdout, err := cmd.StdoutPipe()
	if err != nil {
		t.Fatal(err)
	}
	var stderr strings.Builder
	cmd.Stderr = &stderr
	proc.DieWithParent(cmd)
	if err := cmd.Start(); err != nil {
		t.Fatalf("start %s: %v", bin, err)
	}
	done := make(chan error, 1)
	t.Cleanup(func() {
		_ = cmd.Process.Signal(syscall.SIGINT)
		select {
		case err := <-done:
			if err != nil {
				t.Errorf("%s ended with %v\n%s", bin, err, stderr.String())
			}
		case <-time.After(serverWait):
			_ = cmd.Process.Kill()
			t.Errorf("%s did not stop within %s of SIGINT", bin, serverWait)
		}
	})
	found := make(chan string, 1)
	go func() {
		sc := bufio.NewScanner(stdout)
		sent := false
		for sc.Scan() {
			if m := urlPattern.FindString(sc.Text()); m != "" && !sent {
				found <- m
				sent = true
			}
		}
		_, _ = io.Copy(io.Discard, stdout)
		done <- cmd.Wait()
	}()
	select {
	case u := <-found:
		return u
	case err := <-done:
		done <- err
		t.Fatalf("%s ended before serving: %v\n%s", bin, err, stderr.String())
	case <-time.After(serverWait):
		t.Fatalf("%s printed no URL within %s\n%s", bin, serverWait, stderr.String())
	}
	return ""
}
