//go:build unix

package bucket

import "syscall"

// newChunk returns an empty chunk of capacity chunkSize in an anonymous private mapping, outside the Go heap: the
// garbage collector lets its heap grow by GOGC percent of the live heap before collecting, so a part buffer on the
// heap would cost half as much again in resident memory; outside it costs its size. Chunks are never unmapped (the
// Bucket's chunkPool keeps them for the next part), so no slice of one can outlive its memory. A failed mapping
// falls back to the heap.
func newChunk() []byte {
	b, err := syscall.Mmap(-1, 0, chunkSize, syscall.PROT_READ|syscall.PROT_WRITE, syscall.MAP_ANON|syscall.MAP_PRIVATE)
	if err != nil {
		return make([]byte, 0, chunkSize)
	}
	return b[:0]
}
