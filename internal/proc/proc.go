// Package proc starts the local programs of KOF's demo and tests (the control plane, the Flux controllers, the
// kof-operator, the storage servers) so that none of them outlives the process that started it, and keeps the
// scratch folders of runs that were killed from piling up. Linux only: it relies on the parent-death signal
// (prctl PR_SET_PDEATHSIG, prctl(2)) and /proc.
package proc

import (
	"bytes"
	"errors"
	"fmt"
	"io"
	"os"
	"os/exec"
	"path/filepath"
	"strconv"
	"strings"
	"syscall"
	"time"

	"sigs.k8s.io/controller-runtime/pkg/envtest"
)

// DieWithParent makes the process of cmd (not started yet) receive SIGKILL when the process that starts it dies,
// however it dies: a `go test` timeout, a panic, SIGKILL. Other SysProcAttr settings of cmd are kept. Linux sends
// the signal when the thread that forked the child ends; Go ends a thread only when a goroutine locked to it
// (runtime.LockOSThread) returns, which the callers here never do while their children run.
func DieWithParent(cmd *exec.Cmd) {
	if cmd.SysProcAttr == nil {
		cmd.SysProcAttr = &syscall.SysProcAttr{}
	}
	cmd.SysProcAttr.Pdeathsig = syscall.SIGKILL
}

// controlPlanePrograms are the programs controller-runtime's envtest starts from its BinaryAssetsDirectory.
var controlPlanePrograms = []string{"etcd", "kube-apiserver", "kubectl"}

// ControlPlaneAssets writes into dir (created when missing) one wrapper per program of binDir that envtest starts
// (etcd, kube-apiserver, and kubectl when binDir has it), each running the real program under
// `setpriv --pdeathsig KILL` (util-linux, part of every Debian system), and returns dir for envtest's
// BinaryAssetsDirectory. envtest starts its programs in a process group of their own without a parent-death signal
// (controller-runtime pkg/internal/testing/process), so without the wrapper a killed test binary leaves etcd and
// kube-apiserver running. Errors: a required program missing from binDir (naming it and `make tools`), setpriv
// missing from PATH, or a wrapper that cannot be written.
func ControlPlaneAssets(binDir, dir string) (string, error) {
	setpriv, err := exec.LookPath("setpriv")
	if err != nil {
		return "", fmt.Errorf("setpriv (util-linux) not found: it gives the control plane a parent-death signal: %w", err)
	}
	if err := os.MkdirAll(dir, 0o755); err != nil {
		return "", fmt.Errorf("create %s: %w", dir, err)
	}
	for _, name := range controlPlanePrograms {
		real, err := filepath.Abs(filepath.Join(binDir, name))
		if err != nil {
			return "", err
		}
		if _, err := os.Stat(real); err != nil {
			if name == "kubectl" {
				continue // envtest needs kubectl only for its kubectl helper
			}
			return "", fmt.Errorf("%s: %w; build it with `make tools` (ci/tools/%s.sh)", real, err, name)
		}
		script := fmt.Sprintf("#!/bin/sh\nexec %s --pdeathsig KILL -- %s \"$@\"\n", setpriv, real)
		if err := os.WriteFile(filepath.Join(dir, name), []byte(script), 0o755); err != nil {
			return "", fmt.Errorf("write the %s wrapper: %w", name, err)
		}
	}
	return dir, nil
}

// scratchPrefix starts the name of every scratch folder: kof-scratch-<pid>-<name>-<random>.
const scratchPrefix = "kof-scratch-"

// Scratch removes the scratch folders of earlier runs whose process is gone (a run killed before its cleanup), then
// creates and returns a new folder kof-scratch-<pid>-<name>-<random> under the system's temporary folder for this
// process. Removal failures are returned joined with the result; the folder is still created.
func Scratch(name string) (string, error) {
	sweepErr := Sweep(os.TempDir())
	dir, err := os.MkdirTemp("", scratchPrefix+strconv.Itoa(os.Getpid())+"-"+name+"-")
	if err != nil {
		return "", errors.Join(fmt.Errorf("create scratch folder: %w", err), sweepErr)
	}
	return dir, sweepErr
}

// Sweep removes every scratch folder under parent whose process has ended, and returns the removal errors.
func Sweep(parent string) error {
	matches, err := filepath.Glob(filepath.Join(parent, scratchPrefix+"*"))
	if err != nil {
		return err
	}
	var errs []error
	for _, m := range matches {
		pidText, _, _ := strings.Cut(strings.TrimPrefix(filepath.Base(m), scratchPrefix), "-")
		pid, err := strconv.Atoi(pidText)
		if err != nil || Alive(pid) {
			continue
		}
		if err := os.RemoveAll(m); err != nil {
			errs = append(errs, fmt.Errorf("remove the scratch folder of ended process %d: %w", pid, err))
		}
	}
	return errors.Join(errs...)
}

// UseScratch makes a Scratch folder the temporary folder of this process (TMPDIR, so os.TempDir, t.TempDir and
// envtest's own folders land inside it) and returns it with the function that ends its use: it restores TMPDIR and,
// for the exit code 0, removes the folder; for any other code it keeps the folder (the logs and kubeconfigs a failed
// run names) and says so on stderr; the next run's Scratch removes it, its process having ended.
func UseScratch(name string) (string, func(code int), error) {
	dir, err := Scratch(name)
	if dir == "" {
		return "", func(int) {}, err
	}
	old, had := os.LookupEnv("TMPDIR")
	if err := os.Setenv("TMPDIR", dir); err != nil {
		return "", func(int) {}, err
	}
	return dir, func(code int) {
		if had {
			_ = os.Setenv("TMPDIR", old)
		} else {
			_ = os.Unsetenv("TMPDIR")
		}
		if code != 0 {
			fmt.Fprintf(os.Stderr, "%s: kept %s for the failed run (removed by the next run)\n", name, dir)
			return
		}
		_ = os.RemoveAll(dir)
	}, err
}

// Alive reports whether a process with pid exists and is not a zombie.
func Alive(pid int) bool {
	if pid <= 0 {
		return false
	}
	state, err := stat(pid)
	return err == nil && state.state != "Z"
}

// CPUTime returns the user plus system CPU time process pid has used so far: fields 14 and 15 of
// /proc/<pid>/stat (proc(5)), counted in clock ticks of 1/100 s (USER_HZ, 100 on every Linux architecture Go
// supports). Errors are a missing process or an unreadable stat line.
func CPUTime(pid int) (time.Duration, error) {
	data, err := os.ReadFile(filepath.Join("/proc", strconv.Itoa(pid), "stat"))
	if err != nil {
		return 0, fmt.Errorf("read process stat: %w", err)
	}
	d, err := statCPU(string(data))
	if err != nil {
		return 0, fmt.Errorf("/proc/%d/stat: %w", pid, err)
	}
	return d, nil
}

// statCPU returns utime + stime of a /proc/<pid>/stat line s, in clock ticks of 1/100 s.
func statCPU(s string) (time.Duration, error) {
	_, f, err := statFields(s)
	if err != nil {
		return 0, err
	}
	if len(f) < 13 {
		return 0, fmt.Errorf("%d fields after the command name, want at least 13", len(f))
	}
	var ticks int64
	for _, v := range f[11:13] {
		n, err := strconv.ParseInt(v, 10, 64)
		if err != nil {
			return 0, fmt.Errorf("CPU ticks %q: %w", v, err)
		}
		ticks += n
	}
	return time.Duration(ticks) * 10 * time.Millisecond, nil
}

// statFields splits a /proc/<pid>/stat line s (proc(5): pid (comm) state ppid ...) into the command name and the
// fields after it, from field 3 (state) on; the command name may hold spaces and parentheses.
func statFields(s string) (string, []string, error) {
	open, end := strings.IndexByte(s, '('), strings.LastIndexByte(s, ')')
	if open < 0 || end < open {
		return "", nil, errors.New("no command name")
	}
	return s[open+1 : end], strings.Fields(s[end+1:]), nil
}

// procStat is the part of /proc/<pid>/stat this package reads.
type procStat struct {
	comm, state string
	ppid        int
}

// stat reads /proc/<pid>/stat (proc(5): pid (comm) state ppid ...).
func stat(pid int) (procStat, error) {
	data, err := os.ReadFile(filepath.Join("/proc", strconv.Itoa(pid), "stat"))
	if err != nil {
		return procStat{}, err
	}
	comm, fields, err := statFields(string(data))
	if err != nil || len(fields) < 2 {
		return procStat{}, fmt.Errorf("/proc/%d/stat: unexpected format", pid)
	}
	ppid, err := strconv.Atoi(fields[1])
	if err != nil {
		return procStat{}, fmt.Errorf("/proc/%d/stat: ppid: %w", pid, err)
	}
	return procStat{comm: comm, state: fields[0], ppid: ppid}, nil
}

// Descendant is a live process below another in the process tree.
type Descendant struct {
	PID  int
	Comm string
}

// Descendants returns every live process whose parent chain leads to pid, from /proc.
func Descendants(pid int) ([]Descendant, error) {
	entries, err := os.ReadDir("/proc")
	if err != nil {
		return nil, err
	}
	children := map[int][]Descendant{}
	for _, e := range entries {
		p, err := strconv.Atoi(e.Name())
		if err != nil {
			continue
		}
		st, err := stat(p)
		if err != nil || st.state == "Z" {
			continue // ended meanwhile
		}
		children[st.ppid] = append(children[st.ppid], Descendant{PID: p, Comm: st.comm})
	}
	var out []Descendant
	queue := []int{pid}
	for len(queue) > 0 {
		next := queue[0]
		queue = queue[1:]
		for _, c := range children[next] {
			out = append(out, c)
			queue = append(queue, c.PID)
		}
	}
	return out, nil
}

// StartTimeout bounds the start of each control plane program (Envtest).
const StartTimeout = 2 * time.Minute

// Envtest makes env start binDir's etcd, kube-apiserver and kubectl through the wrappers of ControlPlaneAssets,
// written into dir: it sets their paths in env.ControlPlane, which envtest prefers over KUBEBUILDER_ASSETS and
// BinaryAssetsDirectory (controller-runtime pkg/envtest, Environment.Start), so a KUBEBUILDER_ASSETS in the
// environment cannot bypass them; etcd's data and kube-apiserver's certificates go into dir as well. An empty binDir
// means KUBEBUILDER_ASSETS. Errors: those of ControlPlaneAssets, or a folder that cannot be created.
func Envtest(env *envtest.Environment, binDir, dir string) error {
	if binDir == "" {
		binDir = os.Getenv("KUBEBUILDER_ASSETS")
	}
	assets, err := ControlPlaneAssets(binDir, dir)
	if err != nil {
		return err
	}
	env.BinaryAssetsDirectory = assets
	api := env.ControlPlane.GetAPIServer()
	api.Path = filepath.Join(assets, "kube-apiserver")
	if env.ControlPlane.Etcd == nil {
		env.ControlPlane.Etcd = &envtest.Etcd{}
	}
	env.ControlPlane.Etcd.Path = filepath.Join(assets, "etcd")
	// envtest's default start timeout (20 s) is too short for kube-apiserver on a busy two-core machine: a server
	// that is still starting is pending, not failed. Environment.Start sets both programs' timeouts from
	// ControlPlaneStartTimeout (controller-runtime pkg/envtest, Environment.Start), overwriting their own fields,
	// so that is the field to set.
	if env.ControlPlaneStartTimeout == 0 {
		env.ControlPlaneStartTimeout = StartTimeout
	}
	// etcd's data and kube-apiserver's certificates in dir too (envtest's default is a folder of its own under the
	// system's temporary folder, left behind when the process is killed).
	for _, d := range []*string{&env.ControlPlane.Etcd.DataDir, &api.CertDir} {
		if *d != "" {
			continue
		}
		if *d, err = os.MkdirTemp(dir, "state-"); err != nil {
			return fmt.Errorf("create the control plane's state folder: %w", err)
		}
	}
	if _, err := os.Stat(filepath.Join(assets, "kubectl")); err == nil {
		env.ControlPlane.KubectlPath = filepath.Join(assets, "kubectl")
	}
	// Their output into dir too (envtest discards it), so a start that fails can say why (EnvtestLogs).
	for _, l := range []struct {
		name     string
		out, err *io.Writer
	}{{"kube-apiserver", &api.Out, &api.Err}, {"etcd", &env.ControlPlane.Etcd.Out, &env.ControlPlane.Etcd.Err}} {
		if *l.out != nil || *l.err != nil {
			continue
		}
		f, err := os.OpenFile(filepath.Join(dir, l.name+".log"), os.O_CREATE|os.O_WRONLY|os.O_APPEND, 0o644)
		if err != nil {
			return fmt.Errorf("create the %s log: %w", l.name, err)
		}
		*l.out, *l.err = f, f
	}
	return nil
}

// EnvtestLogs returns the last n lines of the kube-apiserver and etcd output that Envtest sent to dir, each under
// its program's name ("" when there is none), for the error of a control plane that did not start.
func EnvtestLogs(dir string, n int) string {
	var b strings.Builder
	for _, name := range []string{"etcd", "kube-apiserver"} {
		data, err := os.ReadFile(filepath.Join(dir, name+".log"))
		if err != nil || len(bytes.TrimSpace(data)) == 0 {
			continue
		}
		lines := strings.Split(strings.TrimRight(string(data), "\n"), "\n")
		if len(lines) > n {
			lines = lines[len(lines)-n:]
		}
		fmt.Fprintf(&b, "last lines of %s (%s):\n%s\n", name, filepath.Join(dir, name+".log"), strings.Join(lines, "\n"))
	}
	return b.String()
}
