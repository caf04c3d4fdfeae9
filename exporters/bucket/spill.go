package bucket

import (
	"errors"
	"fmt"
	"io"
	"io/fs"
	"os"
	"path/filepath"
)

// spillPattern names the files of spillBuffers in a scratch folder (os.CreateTemp replaces the `*`); SpillTo removes
// the files of this name a previous run left.
const spillPattern = "kof-part-*"

// partStore holds the bytes of one part of an Upload: in memory (partBuffer) or in a file of a scratch folder
// (spillBuffer).
type partStore interface {
	// write appends as much of p as fits within limit bytes in total and returns how much it took; errors are
	// those of the scratch file.
	write(p []byte, limit int) (int, error)
	// len returns the bytes held.
	len() int
	// reader returns a reader of the bytes held, valid until reset or release (an io.ReadSeeker and io.ReaderAt,
	// so that the S3 client can rewind it to retry a request without copying it).
	reader() partReader
	// reset empties the store for the next part of the same upload.
	reset()
	// release frees what the store holds once its upload is committed or aborted; the store is empty after it and
	// may be written again.
	release() error
}

// partReader reads the bytes of a part.
type partReader interface {
	io.ReadSeeker
	io.ReaderAt
	Size() int64
}

// spillBuffer holds the bytes of one part in a file of folder dir instead of memory, so that a part costs the
// process no resident memory (its pages are the kernel's page cache, which the kernel reclaims under pressure). The
// file is created at the first write, and its name removed at once where the system allows it (Unix: the open file
// lives on without a name, so even a run killed outright leaves nothing in dir); every part of the upload reuses
// it from offset 0, and release closes it (and removes its name where it could not be removed before).
type spillBuffer struct {
	dir string
	f   *os.File
	// named is true while the file still has its name in dir (the removal right after creating it failed).
	named bool
	n     int
}

// write appends as much of p as fits within limit bytes at offset len() of the scratch file. Errors name the file
// and say how to give the scratch folder room.
func (b *spillBuffer) write(p []byte, limit int) (int, error) {
	k := min(len(p), limit-b.n)
	if k <= 0 {
		return 0, nil
	}
	if b.f == nil {
		f, err := os.CreateTemp(b.dir, spillPattern)
		if err != nil {
			return 0, fmt.Errorf("scratch folder %s: %w; mount a writable volume there with room for %d bytes per upload", b.dir, err, PartSize)
		}
		b.f, b.named = f, os.Remove(f.Name()) != nil
	}
	n, err := b.f.WriteAt(p[:k], int64(b.n))
	b.n += n
	if err != nil {
		return n, fmt.Errorf("scratch file %s: %w; give the scratch folder room for %d bytes per upload", b.f.Name(), err, PartSize)
	}
	return n, nil
}

func (b *spillBuffer) len() int { return b.n }

func (b *spillBuffer) reader() partReader {
	if b.f == nil {
		return io.NewSectionReader(emptyReaderAt{}, 0, 0)
	}
	return io.NewSectionReader(b.f, 0, int64(b.n))
}

// reset keeps the file for the next part (overwritten from offset 0; the reader of a part never reads past its
// length).
func (b *spillBuffer) reset() { b.n = 0 }

// release closes the scratch file (and removes its name if it still has one). Errors are those of the file system.
func (b *spillBuffer) release() error {
	b.n = 0
	if b.f == nil {
		return nil
	}
	f := b.f
	b.f = nil
	err := f.Close()
	if b.named {
		if rerr := os.Remove(f.Name()); rerr != nil && !errors.Is(rerr, fs.ErrNotExist) {
			err = errors.Join(err, rerr)
		}
		b.named = false
	}
	return err
}

// emptyReaderAt is the content of a spillBuffer that was never written.
type emptyReaderAt struct{}

func (emptyReaderAt) ReadAt([]byte, int64) (int, error) { return 0, io.EOF }

// SpillTo makes every later upload of b hold its part in a file of folder dir instead of in memory (at most PartSize
// bytes per upload open at once), and removes the part files that a previous run left in dir (a run that crashed on
// a system where an open file cannot lose its name). dir must be a writable folder; "" keeps parts in memory. It
// returns how many leftover files it removed. Errors name the folder and the fix.
func (b *Bucket) SpillTo(dir string) (int, error) {
	if dir == "" {
		b.spillDir = ""
		return 0, nil
	}
	if st, err := os.Stat(dir); err != nil || !st.IsDir() {
		if err == nil {
			err = errors.New("not a folder")
		}
		return 0, fmt.Errorf("scratch folder %s: %w; mount a writable volume there (or set none to keep upload parts in memory)", dir, err)
	}
	left, err := filepath.Glob(filepath.Join(dir, spillPattern))
	if err != nil {
		return 0, fmt.Errorf("scratch folder %s: %w", dir, err)
	}
	removed := 0
	for _, name := range left {
		switch err := os.Remove(name); {
		case err == nil:
			removed++
		case !errors.Is(err, fs.ErrNotExist): // gone already: another run's file, removed by that run
			return removed, fmt.Errorf("scratch folder %s: remove the leftover part file: %w", dir, err)
		}
	}
	probe, err := os.CreateTemp(dir, spillPattern)
	if err != nil {
		return removed, fmt.Errorf("scratch folder %s: not writable: %w; mount a writable volume there (or set none to keep upload parts in memory)", dir, err)
	}
	_ = probe.Close()
	if err := os.Remove(probe.Name()); err != nil {
		return removed, fmt.Errorf("scratch folder %s: %w", dir, err)
	}
	b.spillDir = dir
	return removed, nil
}
