//go:build !unix

package bucket

// newChunk returns an empty chunk of capacity chunkSize (on the heap where anonymous mappings are not available).
func newChunk() []byte { return make([]byte, 0, chunkSize) }
