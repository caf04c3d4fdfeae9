package bucket

import (
	"bytes"
	"io"
	"math/rand/v2"
	"testing"
)

// TestPartBuffer fills a part buffer past several chunks in writes of odd sizes, up to a limit that is not a multiple
// of chunkSize, and checks that it took exactly the limit, that every chunk but the last is full (no chunk grows
// past chunkSize: regression, the part was one slice grown by append, which allocated about five times PartSize on
// the way), that Read, Seek and ReadAt return the written bytes, and that a reset hands the chunks to the next part.
func TestPartBuffer(t *testing.T) {
	var pool chunkPool
	b := partBuffer{pool: &pool}
	src, limit, taken := fillPart(t, 1, b.write)
	if taken != limit || b.len() != limit {
		t.Fatalf("took %d bytes, buffer holds %d; want the limit %d", taken, b.len(), limit)
	}
	if len(b.chunks) != 4 {
		t.Fatalf("%d chunks, want 4", len(b.chunks))
	}
	for i, c := range b.chunks {
		if cap(c) != chunkSize || (i < len(b.chunks)-1 && len(c) != chunkSize) {
			t.Fatalf("chunk %d: len %d cap %d, want full chunks of %d but the last", i, len(c), cap(c), chunkSize)
		}
	}
	r := b.reader()
	checkPartReader(t, r, src, limit)
	if pos, err := r.Seek(-1, io.SeekEnd); err != nil || pos != int64(limit-1) {
		t.Fatalf("Seek from the end: %d, %v", pos, err)
	}
	if _, err := r.Seek(-1, io.SeekStart); err == nil {
		t.Fatal("Seek to a negative position: no error")
	}
	b.reset()
	if b.len() != 0 || len(b.chunks) != 0 || len(pool.free) != 4 {
		t.Fatalf("after reset: %d bytes, %d chunks, %d in the pool; want 0, 0, 4", b.len(), len(b.chunks), len(pool.free))
	}
	_, _ = b.write([]byte("next part"), limit)
	if len(pool.free) != 3 {
		t.Fatalf("the next part left %d chunks in the pool, want 3 (one taken, none allocated)", len(pool.free))
	}
	if got, _ := io.ReadAll(b.reader()); string(got) != "next part" {
		t.Fatalf("next part reads %q", got)
	}
}

// checkPartReader checks r, the reader of a part holding src[:limit] (limit > chunkSize+10): it reads the part
// whole, seeks to 10 bytes before the first chunk boundary and reads across it, and reads the last 5 bytes at their
// offset with io.EOF.
func checkPartReader(t *testing.T, r partReader, src []byte, limit int) {
	t.Helper()
	if got, err := io.ReadAll(r); err != nil || !bytes.Equal(got, src[:limit]) {
		t.Fatalf("ReadAll: %d bytes, err %v; want the %d bytes written", len(got), err, limit)
	}
	if pos, err := r.Seek(chunkSize-10, io.SeekStart); err != nil || pos != chunkSize-10 {
		t.Fatalf("Seek: %d, %v", pos, err)
	}
	part := make([]byte, 20)
	if n, err := io.ReadFull(r, part); err != nil || n != 20 || !bytes.Equal(part, src[chunkSize-10:chunkSize+10]) {
		t.Fatalf("read across a chunk boundary: %d, %v", n, err)
	}
	if n, err := r.ReadAt(part, int64(limit-5)); n != 5 || err != io.EOF || !bytes.Equal(part[:5], src[limit-5:limit]) {
		t.Fatalf("ReadAt at the end: %d, %v; want 5 bytes and io.EOF", n, err)
	}
}

// fillPart writes random bytes (seeded by seed) with write in writes of odd sizes up to 100,000 bytes, to a part
// whose limit, 3*chunkSize+12345, is not a multiple of chunkSize, until write takes less than it was given. It
// returns the bytes offered (999 more than the limit), the limit and how many bytes write took; a write error fails
// the test.
func fillPart(t *testing.T, seed uint64, write func(p []byte, limit int) (int, error)) (src []byte, limit, taken int) {
	t.Helper()
	limit = 3*chunkSize + 12345
	src = make([]byte, limit+999)
	rng := rand.New(rand.NewPCG(seed, seed+1))
	for i := range src {
		src[i] = byte(rng.Uint32())
	}
	for p := src; len(p) > 0; {
		k := min(len(p), 1+rng.IntN(100_000))
		c, err := write(p[:k], limit)
		if err != nil {
			t.Fatal(err)
		}
		taken += c
		if c < k {
			break
		}
		p = p[k:]
	}
	return src, limit, taken
}
