package layout

import (
	"os"
	"os/exec"
	"path/filepath"
	"regexp"
	"strings"
	"testing"
)

// Programs started in the background must die with the process that starts them, or a killed test binary leaves
// servers running (internal/proc). These are the rules, checked over every Go file of the repository.
var (
	// startCall is a background start of an exec.Cmd (`cmd.Start()`, `p.cmd.Start()`, `ps.Cmd.Start()`).
	startCall = regexp.MustCompile(`(?i)\bcmd\.Start\(\)`)
	// envtestEnv is a literal of controller-runtime's envtest.Environment, which starts etcd and kube-apiserver.
	envtestEnv = regexp.MustCompile(`envtest\.Environment\{`)
)

// processExempt are the files allowed to start a process that outlives this one, with the reason.
var processExempt = map[string]string{
	"tools/kof/cmd_ui.go": "opens the user's browser, which must stay open after kof ui ends",
}

// processProblems returns what file (its path and contents) breaks of the rules above.
func processProblems(path, src string) []string {
	if _, ok := processExempt[path]; ok || strings.HasPrefix(path, "internal/proc/") {
		return nil
	}
	var out []string
	if startCall.MatchString(src) && !strings.Contains(src, "proc.DieWithParent(") {
		out = append(out, path+": starts a process (cmd.Start) without proc.DieWithParent(cmd): a killed test "+
			"binary would leave it running")
	}
	if envtestEnv.MatchString(src) && !strings.Contains(src, "Envtest(") {
		out = append(out, path+": starts envtest without proc.Envtest (or testproc.Envtest): a killed test "+
			"binary would leave etcd and kube-apiserver running")
	}
	return out
}

// Every Go file that starts a program in the background gives it a parent-death signal, and every envtest control
// plane runs its programs through the wrappers that give them one.
func TestProcessesDieWithTheirParent(t *testing.T) {
	cmd := exec.Command("git", "ls-files", "--cached", "--others", "--exclude-standard", "-z", "--", "*.go")
	cmd.Dir = root
	out, err := cmd.Output()
	if err != nil {
		t.Fatalf("git ls-files: %v", err)
	}
	checked := 0
	for _, f := range strings.Split(string(out), "\x00") {
		if f == "" {
			continue
		}
		data, err := os.ReadFile(filepath.Join(root, f))
		if os.IsNotExist(err) {
			continue
		}
		if err != nil {
			t.Fatal(err)
		}
		checked++
		for _, p := range processProblems(f, string(data)) {
			t.Error(p)
		}
	}
	if checked < 100 {
		t.Fatalf("checked %d Go files; want the whole repository", checked)
	}
}

// The check finds a planted start without the parent-death signal and a planted envtest without the wrappers.
func TestProcessProblemsFindsPlantedViolations(t *testing.T) {
	bad := "cmd := exec.Command(bin)\nif err := cmd.Start(); err != nil {}\nenv := &envtest.Environment{}\n"
	if got := processProblems("tests/x/x_test.go", bad); len(got) != 2 {
		t.Errorf("planted violations: got %q, want two problems", got)
	}
	good := "proc.DieWithParent(cmd)\nif err := cmd.Start(); err != nil {}\n" +
		"env := &envtest.Environment{}\ntestproc.Envtest(t, env, bin)\n"
	if got := processProblems("tests/x/x_test.go", good); len(got) != 0 {
		t.Errorf("a correct file: got %q, want no problem", got)
	}
}
