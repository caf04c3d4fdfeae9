package main

import (
	"os"
	"path/filepath"
	"strings"
	"testing"
)

// A bad command line or configuration ends the program with an error naming the problem, before it listens.
func TestRunRefusesBadInput(t *testing.T) {
	bad := filepath.Join(t.TempDir(), "config.yaml")
	if err := os.WriteFile(bad, []byte("issuer: https://i.example\nupstreams: {metrics: 'http://p:8082'}\n"), 0o600); err != nil {
		t.Fatal(err)
	}
	for _, tt := range []struct {
		args []string
		want string
	}{
		{[]string{"--config", filepath.Join(t.TempDir(), "missing.yaml")}, "read tenant proxy config"},
		{[]string{"--config", bad}, "audience"},
		{[]string{"extra"}, "unexpected arguments"},
		{[]string{"--no-such-flag"}, "no-such-flag"},
	} {
		if err := run(tt.args); err == nil || !strings.Contains(err.Error(), tt.want) {
			t.Errorf("run(%q) = %v, want an error naming %s", tt.args, err, tt.want)
		}
	}
}
