package bucket

import (
	"errors"
	"io"
	"sync"
)

// chunkSize is the unit of an Upload's buffer. A part is PartSize/chunkSize chunks of fixed size instead of one
// slice grown by append: growing one slice to PartSize allocates about five times PartSize on the way (each new
// array larger than every freed one, so the heap cannot reuse them), which made the resident memory of an hour whose
// file passes PartSize 20 MiB larger than that of a small hour. Chunks are recycled through the Bucket's chunkPool.
const chunkSize = 256 << 10

// chunkPool keeps the chunks of finished parts and uploads for the next ones, so a run allocates at most the chunks
// its uploads hold at once (one part each), however many parts and objects it writes.
type chunkPool struct {
	mu   sync.Mutex
	free [][]byte
}

// get returns an empty chunk of capacity chunkSize.
func (p *chunkPool) get() []byte {
	p.mu.Lock()
	defer p.mu.Unlock()
	if n := len(p.free); n > 0 {
		c := p.free[n-1]
		p.free[n-1] = nil
		p.free = p.free[:n-1]
		return c[:0]
	}
	return newChunk()
}

// put returns chunks to the pool.
func (p *chunkPool) put(chunks [][]byte) {
	p.mu.Lock()
	defer p.mu.Unlock()
	p.free = append(p.free, chunks...)
}

// partBuffer holds the bytes of one part in chunks of chunkSize taken from a chunkPool: all chunks full but the
// last.
type partBuffer struct {
	pool   *chunkPool
	chunks [][]byte
	n      int
}

// write appends as much of p as fits within limit bytes in total and returns how much it took (never an error).
func (b *partBuffer) write(p []byte, limit int) (int, error) {
	taken := 0
	for len(p) > 0 && b.n < limit {
		last := len(b.chunks) - 1
		if last < 0 || len(b.chunks[last]) == chunkSize {
			b.chunks = append(b.chunks, b.pool.get())
			last++
		}
		c := b.chunks[last]
		k := min(chunkSize-len(c), len(p), limit-b.n)
		b.chunks[last] = append(c, p[:k]...)
		p, taken, b.n = p[k:], taken+k, b.n+k
	}
	return taken, nil
}

// len returns the bytes buffered.
func (b *partBuffer) len() int { return b.n }

// reader returns a reader of the buffered bytes, valid until reset (an io.ReadSeeker and io.ReaderAt, so that the
// S3 client can rewind it to retry a request without copying it).
func (b *partBuffer) reader() partReader { return &chunkReader{chunks: b.chunks, size: int64(b.n)} }

// reset empties the buffer and returns its chunks to the pool.
func (b *partBuffer) reset() {
	b.pool.put(b.chunks)
	clear(b.chunks)
	b.chunks, b.n = b.chunks[:0], 0
}

// release is reset (the chunks stay in the pool for the next upload).
func (b *partBuffer) release() error {
	b.reset()
	return nil
}

// chunkReader reads the concatenation of chunks (each of chunkSize bytes but the last) of size bytes in total.
type chunkReader struct {
	chunks [][]byte
	size   int64
	off    int64
}

// ReadAt implements io.ReaderAt.
func (r *chunkReader) ReadAt(p []byte, off int64) (int, error) {
	if off < 0 {
		return 0, errors.New("chunkReader.ReadAt: negative offset")
	}
	n := 0
	for len(p) > 0 && off < r.size {
		c := r.chunks[off/chunkSize][off%chunkSize:]
		k := copy(p, c)
		p, n, off = p[k:], n+k, off+int64(k)
	}
	if len(p) > 0 {
		return n, io.EOF
	}
	return n, nil
}

// Read implements io.Reader.
func (r *chunkReader) Read(p []byte) (int, error) {
	if r.off >= r.size {
		return 0, io.EOF
	}
	n, err := r.ReadAt(p, r.off)
	r.off += int64(n)
	if err == io.EOF && n > 0 {
		err = nil
	}
	return n, err
}

// Seek implements io.Seeker.
func (r *chunkReader) Seek(offset int64, whence int) (int64, error) {
	switch whence {
	case io.SeekStart:
	case io.SeekCurrent:
		offset += r.off
	case io.SeekEnd:
		offset += r.size
	default:
		return 0, errors.New("chunkReader.Seek: invalid whence")
	}
	if offset < 0 {
		return 0, errors.New("chunkReader.Seek: negative position")
	}
	r.off = offset
	return offset, nil
}

// Size returns the bytes the reader holds.
func (r *chunkReader) Size() int64 { return r.size }
