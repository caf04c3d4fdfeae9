package harness

import (
	"errors"
	"fmt"
	"os"
	"os/exec"
	"syscall"
	"time"

	"kof.dev/kof/internal/proc"
)

// processStopGrace is how long Process.Stop waits after SIGTERM before it kills the process.
const processStopGrace = 10 * time.Second

// Process is a program of the demo or e2e run (the kof-operator, a Flux controller) running as a local process
// against the control plane.
type Process struct {
	// Name names the program in messages.
	Name string
	// LogPath is the file receiving the process's standard output and error.
	LogPath string

	cmd  *exec.Cmd
	done chan error
	log  *os.File
}

// Operator is the kof-operator process.
type Operator = Process

// StartProcess starts binary with args, KUBECONFIG set to kubeconfig, PATH, HOME and TMPDIR inherited, then env
// (`NAME=value`), writing its output to logPath; the process dies with this one (proc.DieWithParent). It returns an error when the log or the process cannot be created.
func StartProcess(name, binary, kubeconfig string, args, env []string, logPath string) (*Process, error) {
	log, err := os.Create(logPath)
	if err != nil {
		return nil, fmt.Errorf("create %s log: %w", name, err)
	}
	cmd := exec.Command(binary, args...)
	cmd.Env = append([]string{"KUBECONFIG=" + kubeconfig, "PATH=" + os.Getenv("PATH"), "HOME=" + os.Getenv("HOME"),
		"TMPDIR=" + os.TempDir()}, env...)
	cmd.Stdout, cmd.Stderr = log, log
	proc.DieWithParent(cmd)
	if err := cmd.Start(); err != nil {
		_ = log.Close()
		return nil, fmt.Errorf("start %s (%s): %w", name, binary, err)
	}
	p := &Process{Name: name, LogPath: logPath, cmd: cmd, done: make(chan error, 1), log: log}
	go func() { p.done <- cmd.Wait() }()
	return p, nil
}

// Exited returns the process's exit error when it has already ended, and ok=false while it runs.
func (p *Process) Exited() (err error, ok bool) {
	select {
	case err := <-p.done:
		p.done <- err // keep it for Stop
		if err == nil {
			err = errors.New("exited with status 0")
		}
		return err, true
	default:
		return nil, false
	}
}

// Stop sends SIGTERM, waits up to processStopGrace for a clean exit and kills the process after that. It returns
// an error when the process had ended on its own, had to be killed, or ended with an error other than the
// termination itself.
func (p *Process) Stop() error {

	defer p.log.Close()
	if err, ok := p.Exited(); ok {
		return fmt.Errorf("%s had stopped on its own: %w (log: %s)", p.Name, err, p.LogPath)
	}
	_ = p.cmd.Process.Signal(syscall.SIGTERM)
	select {
	case err := <-p.done:
		var exit *exec.ExitError
		if err == nil || (errors.As(err, &exit) && exit.ExitCode() <= 0) { // 0, or ended by the signal
			return nil
		}
		return fmt.Errorf("%s exit: %w (log: %s)", p.Name, err, p.LogPath)
	case <-time.After(processStopGrace):
		_ = p.cmd.Process.Kill()
		<-p.done
		return fmt.Errorf("%s did not stop within %s of SIGTERM; killed (log: %s)", p.Name, processStopGrace,
			p.LogPath)
	}
}

// Kill ends a program whose state is thrown away with it at once (SIGKILL) and waits for its end; it returns an
// error only when the process had ended on its own.
func (p *Process) Kill() error {
	defer p.log.Close()
	if err, ok := p.Exited(); ok {
		return fmt.Errorf("%s had stopped on its own: %w (log: %s)", p.Name, err, p.LogPath)
	}
	_ = p.cmd.Process.Kill()
	p.done <- <-p.done // keep its end for Exited
	return nil
}
