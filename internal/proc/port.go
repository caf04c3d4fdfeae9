package proc

import (
	"errors"
	"fmt"
	"math/rand/v2"
	"net"
	"os"
	"path/filepath"
	"strconv"
	"strings"
	"sync"
	"syscall"
)

// portRangeFile holds the kernel's ephemeral port range: the ports it gives outgoing connections and listeners on
// port 0 (ip(7), ip_local_port_range).
const portRangeFile = "/proc/sys/net/ipv4/ip_local_port_range"

// reserveTries bounds the candidates LoopbackAddr tries before it gives up.
const reserveTries = 500

var (
	heldMu sync.Mutex
	// held keeps the lock files of the ports this process reserved open, so their locks last until it exits.
	held []*os.File
)

// LoopbackAddr reserves a TCP port on 127.0.0.1 for a program that takes a listen address rather than a listener,
// and returns `127.0.0.1:<port>`. A port found by listening on port 0 and closing comes from the kernel's ephemeral
// range, where any outgoing connection of any process may take it as its local port before the program binds it
// (`bind: address already in use`). LoopbackAddr picks ports outside that range instead (below it, or above it when
// the range starts low), and makes the choice exclusive between the processes of one machine (the packages of a
// `go test` run in parallel, a demo beside them) with an flock(2) lock on a file per port under `kof-ports` of
// MachineDir (not under TMPDIR, which each test process points into a scratch folder of its own: locks there would
// exclude no other process), held until this process exits; it then checks that the port can be bound. Errors: the
// lock folder cannot be created, or no free port was found in 500 tries.
func LoopbackAddr() (string, error) {
	lo, hi := reservablePorts()
	return reserveLoopback(func() int { return lo + rand.IntN(hi-lo+1) }, filepath.Join(MachineDir(), "kof-ports"))
}

// reservablePorts returns the range LoopbackAddr draws from: 10000 up to the start of the ephemeral range, or the
// ports above its end when it starts below 12000 (or 10000-32767 when the range cannot be read).
func reservablePorts() (lo, hi int) {
	eLo, eHi, err := ephemeralRange()
	switch {
	case err != nil:
		return 10000, 32767
	case eLo >= 12000:
		return 10000, eLo - 1
	case eHi <= 63000:
		return eHi + 1, 65535
	default:
		return 10000, 32767
	}
}

// ephemeralRange reads the kernel's ephemeral port range.
func ephemeralRange() (lo, hi int, err error) {
	data, err := os.ReadFile(portRangeFile)
	if err != nil {
		return 0, 0, err
	}
	f := strings.Fields(string(data))
	if len(f) != 2 {
		return 0, 0, fmt.Errorf("%s: want two ports, got %q", portRangeFile, data)
	}
	if lo, err = strconv.Atoi(f[0]); err != nil {
		return 0, 0, err
	}
	if hi, err = strconv.Atoi(f[1]); err != nil {
		return 0, 0, err
	}
	return lo, hi, nil
}

// reserveLoopback tries the ports next returns until one is both unlocked under lockDir and bindable on loopback,
// keeping its lock; see LoopbackAddr.
func reserveLoopback(next func() int, lockDir string) (string, error) {
	if err := os.MkdirAll(lockDir, 0o777); err != nil {
		return "", fmt.Errorf("create the port lock folder: %w", err)
	}
	for range reserveTries {
		port := next()
		lock, err := os.OpenFile(filepath.Join(lockDir, strconv.Itoa(port)), os.O_CREATE|os.O_RDWR, 0o666)
		if err != nil {
			return "", fmt.Errorf("open the lock of port %d: %w", port, err)
		}
		if err := syscall.Flock(int(lock.Fd()), syscall.LOCK_EX|syscall.LOCK_NB); err != nil {
			_ = lock.Close()
			if errors.Is(err, syscall.EWOULDBLOCK) {
				continue // another process (or this one) holds it
			}
			return "", fmt.Errorf("lock port %d: %w", port, err)
		}
		addr := net.JoinHostPort("127.0.0.1", strconv.Itoa(port))
		ln, err := net.Listen("tcp", addr)
		if err != nil {
			_ = lock.Close() // taken by a program outside this scheme
			continue
		}
		_ = ln.Close()
		heldMu.Lock()
		held = append(held, lock)
		heldMu.Unlock()
		return addr, nil
	}
	return "", fmt.Errorf("no free loopback port found in %d tries", reserveTries)
}
