package columnar

import (
	"fmt"
	"sync"

	"github.com/klauspost/compress/zstd"
	"github.com/parquet-go/parquet-go/format"
)

// zstdWindow is the match window of the ZSTD encoder: a data page (parquet-go's default page buffer is 256 KiB) is
// compressed on its own, so a larger window finds nothing more, while the encoder's history buffers grow with it
// (with parquet-go's default codec they were 32 MiB of the exporter's 40 MiB heap).
const zstdWindow = 256 << 10

// zstdCodec is Parquet's ZSTD compression codec (format.Zstd, https://parquet.apache.org/docs/file-format/data-pages/compression/)
// on github.com/klauspost/compress/zstd with a window of zstdWindow. EncodeAll and DecodeAll are safe for concurrent
// use, so one codec serves every column of a writer.
type zstdCodec struct {
	enc *zstd.Encoder

	decOnce sync.Once
	dec     *zstd.Decoder
	decErr  error
}

// newZstdCodec returns a zstdCodec encoding at most concurrency pages at once. Its encoder keeps a history of the
// window plus one block (zstd.WithLowerEncoderMem) instead of at least 1 MiB, so a writer's second codec (the series
// file's) costs 0.6 MiB less once its pages pass one block. It encodes at zstd.SpeedFastest: on pages of at most
// 256 KiB the default level's second hash table finds few more matches, so the files of BenchmarkSeriesWriter grow
// 1.5% (1.49 to 1.52 bytes/sample) while ZSTD, the larger part of the samples file's encoding, costs a fifth less.
// Errors are option errors of the zstd package.
func newZstdCodec(concurrency int) (*zstdCodec, error) {
	enc, err := zstd.NewWriter(nil,
		zstd.WithEncoderLevel(zstd.SpeedFastest),
		zstd.WithEncoderConcurrency(concurrency),
		zstd.WithWindowSize(zstdWindow),
		zstd.WithZeroFrames(true),
		zstd.WithEncoderCRC(false),
		zstd.WithLowerEncoderMem(true),
	)
	if err != nil {
		return nil, fmt.Errorf("zstd encoder: %w", err)
	}
	return &zstdCodec{enc: enc}, nil
}

// String returns "ZSTD".
func (c *zstdCodec) String() string { return "ZSTD" }

// CompressionCodec returns format.Zstd, the codec written into the column chunk metadata.
func (c *zstdCodec) CompressionCodec() format.CompressionCodec { return format.Zstd }

// Encode returns src compressed as one ZSTD frame, in dst's memory when it is large enough.
func (c *zstdCodec) Encode(dst, src []byte) ([]byte, error) {
	return c.enc.EncodeAll(src, dst[:0]), nil
}

// Decode returns the ZSTD frames of src decompressed, in dst's memory when it is large enough. Errors are corrupt
// input.
func (c *zstdCodec) Decode(dst, src []byte) ([]byte, error) {
	c.decOnce.Do(func() { c.dec, c.decErr = zstd.NewReader(nil, zstd.WithDecoderConcurrency(1)) })
	if c.decErr != nil {
		return nil, fmt.Errorf("zstd decoder: %w", c.decErr)
	}
	out, err := c.dec.DecodeAll(src, dst[:0])
	if err != nil {
		return nil, fmt.Errorf("zstd decode: %w", err)
	}
	return out, nil
}
