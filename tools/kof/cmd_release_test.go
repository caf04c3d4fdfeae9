package main

import (
	"os"
	"path/filepath"
	"strings"
	"testing"
)

// Bad release input is refused before anything is built or pushed, each problem naming the variable to fix.
func TestReleaseRefusesBadInput(t *testing.T) {
	code, _, errOut := kof(t, "release", "--root", "../..", "--version", "2.0", "--source-date-epoch", "0",
		"--revision", "abc", "--source", "https://example.com", "--out", t.TempDir())
	if code != exitFindings {
		t.Errorf("exit code %d, want %d", code, exitFindings)
	}
	for _, want := range []string{`VERSION="2.0"`, "REGISTRY is empty"} {
		if !strings.Contains(errOut, want) {
			t.Errorf("stderr %q lacks %q", errOut, want)
		}
	}
	code, _, errOut = kof(t, "images", "--version", "2.0.0")
	if code != exitUsage || !strings.Contains(errOut, "--source-date-epoch is required") {
		t.Errorf("images without --source-date-epoch: exit %d, stderr %q", code, errOut)
	}
	code, _, errOut = kof(t, "images", "--version", "2.0.0", "--source-date-epoch", "0", "--platforms", "windows/amd64")
	if code != exitUsage || !strings.Contains(errOut, `platform "windows/amd64"`) {
		t.Errorf("images for windows: exit %d, stderr %q", code, errOut)
	}
}

// A release output folder holding someone else's files is refused and left as it was.
func TestReleaseKeepsForeignOutput(t *testing.T) {
	dir := t.TempDir()
	mine := filepath.Join(dir, "notes.txt")
	if err := os.WriteFile(mine, []byte("mine"), 0o644); err != nil {
		t.Fatal(err)
	}
	code, _, errOut := kof(t, "release", "--root", "../..", "--version", "2.0.0", "--source-date-epoch", "0",
		"--revision", "abc", "--source", "https://example.com", "--registry", "127.0.0.1:1/kof", "--out", dir)
	if code != exitFindings || !strings.Contains(errOut, "is not empty and holds no earlier release.json") {
		t.Errorf("exit %d, stderr %q", code, errOut)
	}
	if _, err := os.Stat(mine); err != nil {
		t.Errorf("the refused folder lost its file: %v", err)
	}
}
