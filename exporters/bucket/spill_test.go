package bucket

import (
	"io"
	"os"
	"path/filepath"
	"strings"
	"testing"
)

// TestSpillBuffer fills a spill buffer in writes of odd sizes up to a limit (a part boundary inside a write), and
// checks that it took exactly the limit, that the reader returns the part's bytes (Read across the whole part, Seek,
// ReadAt at the end), that the next part reuses the same file from offset 0 and reads only its own bytes although
// the file still holds the longer first part, that the scratch folder shows no file while the buffer is open
// (its name is removed at once, so a run killed outright leaves none), and that release closes the file and the
// buffer can be written again.
func TestSpillBuffer(t *testing.T) {
	dir := t.TempDir()
	b := spillBuffer{dir: dir}
	if got, _ := io.ReadAll(b.reader()); len(got) != 0 {
		t.Fatalf("an unwritten buffer reads %d bytes, want 0", len(got))
	}
	src, limit, taken := fillPart(t, 3, b.write)
	if taken != limit || b.len() != limit {
		t.Fatalf("took %d bytes, buffer holds %d; want the limit %d", taken, b.len(), limit)
	}
	if c, err := b.write(src, limit); c != 0 || err != nil {
		t.Fatalf("write to a full part took %d bytes, %v; want 0, nil", c, err)
	}
	if left, _ := os.ReadDir(dir); len(left) != 0 {
		t.Fatalf("scratch folder holds %v while the part is open; want nothing (the file's name is removed at once)", left)
	}
	file := b.f
	r := b.reader()
	checkPartReader(t, r, src, limit)
	if r.Size() != int64(limit) {
		t.Fatalf("reader size %d, want %d", r.Size(), limit)
	}

	b.reset()
	if b.len() != 0 {
		t.Fatalf("after reset the buffer holds %d bytes, want 0", b.len())
	}
	if c, err := b.write([]byte("next part"), limit); c != 9 || err != nil {
		t.Fatalf("next part: took %d, %v", c, err)
	}
	if b.f != file {
		t.Fatal("the next part opened another file; want the upload's file reused")
	}
	if got, _ := io.ReadAll(b.reader()); string(got) != "next part" {
		t.Fatalf("next part reads %q; want only its own bytes", got)
	}

	if err := b.release(); err != nil {
		t.Fatal(err)
	}
	if b.f != nil || b.len() != 0 {
		t.Fatalf("after release: file %v, %d bytes; want none", b.f, b.len())
	}
	if _, err := file.Stat(); err == nil {
		t.Fatal("release left the scratch file open")
	}
	if err := b.release(); err != nil {
		t.Fatalf("second release: %v", err)
	}
	if _, err := b.write([]byte("again"), limit); err != nil {
		t.Fatal(err)
	}
	if got, _ := io.ReadAll(b.reader()); string(got) != "again" {
		t.Fatalf("a released buffer written again reads %q", got)
	}
	_ = b.release()
	if left, _ := os.ReadDir(dir); len(left) != 0 {
		t.Fatalf("scratch folder holds %v after release; want nothing", left)
	}
}

// TestSpillBufferKeepsNameUntilRelease covers systems where an open file cannot lose its name: a part file still
// named in the folder while the part is open is removed by release.
func TestSpillBufferKeepsNameUntilRelease(t *testing.T) {
	dir := t.TempDir()
	f, err := os.CreateTemp(dir, spillPattern) // what write leaves where the removal after creating fails
	if err != nil {
		t.Fatal(err)
	}
	b := spillBuffer{dir: dir, f: f, named: true}
	if _, err := b.write([]byte("part"), PartSize); err != nil {
		t.Fatal(err)
	}
	if got, _ := io.ReadAll(b.reader()); string(got) != "part" {
		t.Fatalf("part reads %q", got)
	}
	if err := b.release(); err != nil {
		t.Fatal(err)
	}
	if left, _ := os.ReadDir(dir); len(left) != 0 {
		t.Fatalf("scratch folder holds %v after release; want nothing", left)
	}
}

// TestSpillTo checks that SpillTo removes the part files a previous run left and nothing else, that the uploads of
// the bucket then spill, that "" keeps parts in memory, and that a missing folder, a file and a read-only folder are
// errors naming the folder and the fix.
func TestSpillTo(t *testing.T) {
	dir := t.TempDir()
	for _, name := range []string{"kof-part-123", "kof-part-456", "other.txt"} {
		if err := os.WriteFile(filepath.Join(dir, name), []byte("x"), 0o600); err != nil {
			t.Fatal(err)
		}
	}
	b := &Bucket{}
	removed, err := b.SpillTo(dir)
	if err != nil || removed != 2 {
		t.Fatalf("SpillTo = %d, %v; want the 2 leftover part files removed", removed, err)
	}
	left, _ := os.ReadDir(dir)
	if len(left) != 1 || left[0].Name() != "other.txt" {
		t.Fatalf("scratch folder holds %v; want only other.txt", left)
	}
	if _, ok := b.NewUpload(t.Context(), "k", "").buf.(*spillBuffer); !ok {
		t.Fatal("an upload of a bucket with a scratch folder keeps its part in memory; want a spill file")
	}
	if _, err := b.SpillTo(""); err != nil {
		t.Fatal(err)
	}
	if _, ok := b.NewUpload(t.Context(), "k", "").buf.(*partBuffer); !ok {
		t.Fatal("an upload of a bucket without a scratch folder does not keep its part in memory")
	}

	for name, path := range map[string]string{
		"missing": filepath.Join(dir, "missing"),
		"file":    filepath.Join(dir, "other.txt"),
	} {
		if _, err := (&Bucket{}).SpillTo(path); err == nil || !strings.Contains(err.Error(), "scratch folder "+path) ||
			!strings.Contains(err.Error(), "mount a writable volume there") {
			t.Errorf("%s: SpillTo error %v; want one naming the folder and the fix", name, err)
		}
	}
	if os.Geteuid() != 0 { // root writes into a read-only folder
		ro := t.TempDir()
		if err := os.Chmod(ro, 0o500); err != nil {
			t.Fatal(err)
		}
		if _, err := (&Bucket{}).SpillTo(ro); err == nil || !strings.Contains(err.Error(), "not writable") {
			t.Errorf("read-only folder: SpillTo error %v; want one saying it is not writable", err)
		}
	}
}
