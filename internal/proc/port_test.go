package proc

import (
	"net"
	"os"
	"path/filepath"
	"strconv"
	"syscall"
	"testing"
)

// Reserved ports lie outside the kernel's ephemeral range (where outgoing connections take their local ports), are
// never handed out twice, and can be bound (regression: a collector given a port found by listening on port 0
// failed with `bind: address already in use` on a busy CI machine).
func TestLoopbackAddrAvoidsTheEphemeralRange(t *testing.T) {
	eLo, eHi, err := ephemeralRange()
	if err != nil {
		t.Skipf("no ephemeral range to compare with: %v", err)
	}
	seen := map[int]bool{}
	for range 200 {
		addr, err := LoopbackAddr()
		if err != nil {
			t.Fatal(err)
		}
		host, p, err := net.SplitHostPort(addr)
		if err != nil || host != "127.0.0.1" {
			t.Fatalf("address %q: want 127.0.0.1:<port> (%v)", addr, err)
		}
		port, _ := strconv.Atoi(p)
		if port >= eLo && port <= eHi {
			t.Fatalf("port %d is inside the ephemeral range %d-%d", port, eLo, eHi)
		}
		if seen[port] {
			t.Fatalf("port %d handed out twice", port)
		}
		seen[port] = true
		ln, err := net.Listen("tcp", addr)
		if err != nil {
			t.Fatalf("reserved %s cannot be bound: %v", addr, err)
		}
		ln.Close()
	}
}

// A port whose lock another holder keeps, or that a program outside the scheme listens on, is skipped for the next
// candidate.
func TestReserveLoopbackSkipsLockedAndBoundPorts(t *testing.T) {
	dir := t.TempDir()
	busy, err := net.Listen("tcp", "127.0.0.1:0")
	if err != nil {
		t.Fatal(err)
	}
	defer busy.Close()
	bound := busy.Addr().(*net.TCPAddr).Port
	free, err := net.Listen("tcp", "127.0.0.1:0")
	if err != nil {
		t.Fatal(err)
	}
	want := free.Addr().(*net.TCPAddr).Port
	free.Close()
	locked := want + 1
	other, err := os.OpenFile(filepath.Join(dir, strconv.Itoa(locked)), os.O_CREATE|os.O_RDWR, 0o666)
	if err != nil {
		t.Fatal(err)
	}
	defer other.Close()
	if err := syscall.Flock(int(other.Fd()), syscall.LOCK_EX|syscall.LOCK_NB); err != nil {
		t.Fatal(err)
	}
	candidates := []int{locked, bound, want}
	tried := 0
	addr, err := reserveLoopback(func() int { tried++; return candidates[tried-1] }, dir)
	if err != nil {
		t.Fatal(err)
	}
	if addr != "127.0.0.1:"+strconv.Itoa(want) || tried != 3 {
		t.Fatalf("got %s after %d candidates, want 127.0.0.1:%d after 3", addr, tried, want)
	}
	// The same port is not handed out again while this process holds it.
	if _, err := reserveLoopback(func() int { return want }, dir); err == nil {
		t.Fatal("a held port was reserved twice")
	}
}
