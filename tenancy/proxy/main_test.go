package proxy

import (
	"bytes"
	"fmt"
	"io"
	"log/slog"
	"os"
	"sync"
	"testing"

	"kof.dev/kof/internal/proc"
)

// TestMain runs the package in a scratch folder and stops the shared stack's servers at the end.
func TestMain(m *testing.M) {
	_, removeScratch, err := proc.UseScratch("tenant-proxy")
	if err != nil {
		fmt.Fprintln(os.Stderr, err)
	}
	code := m.Run()
	stopShared()
	removeScratch(code)
	os.Exit(code)
}

// lockedBuffer is a log sink several requests write at once.
type lockedBuffer struct {
	mu *sync.Mutex
	b  *bytes.Buffer
}

func (l *lockedBuffer) Write(p []byte) (int, error) {
	l.mu.Lock()
	defer l.mu.Unlock()
	return l.b.Write(p)
}

// newTestLogger returns the proxy's JSON logger writing into buf.
func newTestLogger(buf *bytes.Buffer, mu *sync.Mutex) *slog.Logger {
	return slog.New(slog.NewJSONHandler(io.Writer(&lockedBuffer{mu: mu, b: buf}), nil))
}
