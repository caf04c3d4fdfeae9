package image

import (
	"archive/tar"
	"bytes"
	"compress/gzip"
	"crypto/sha256"
	"encoding/hex"
	"fmt"
	"io"
	"os"
	"time"

	v1 "github.com/google/go-containerregistry/pkg/v1"
	"github.com/google/go-containerregistry/pkg/v1/tarball"
	"github.com/google/go-containerregistry/pkg/v1/types"
)

// Account files of the image: root and the non-root user the image runs as, neither with a login shell (the image
// has none). They let programs and runtimes that resolve the user by name find it.
const (
	passwdFile = "root:x:0:0:root:/root:/sbin/nologin\n" +
		"nonroot:x:65532:65532:nonroot:/home/nonroot:/sbin/nologin\n"
	groupFile = "root:x:0:\nnonroot:x:65532:\n"
)

// Entry is one file or folder of an image layer.
type Entry struct {
	// Path inside the image, without a leading `/`; folders end in `/`.
	Path string
	// Mode holds the permission bits (and sticky bit) of the entry.
	Mode int64
	// UID and GID own the entry.
	UID, GID int
	// Body is the content of a file; nil for a folder.
	Body []byte
}

// Entries returns the entries of the layer of the image name whose binary is bin, in archive order: /etc with the
// account files, /home/nonroot, /tmp and the binary at Entrypoint(name). Nothing else: no shell, no package manager.
func Entries(name string, bin []byte) []Entry {
	return []Entry{
		{Path: "etc/", Mode: 0o755},
		{Path: "etc/group", Mode: 0o644, Body: []byte(groupFile)},
		{Path: "etc/passwd", Mode: 0o644, Body: []byte(passwdFile)},
		{Path: "home/", Mode: 0o755},
		{Path: "home/nonroot/", Mode: 0o700, UID: UID, GID: UID},
		{Path: "tmp/", Mode: 0o1777},
		{Path: Entrypoint(name)[1:], Mode: 0o755, Body: bin},
	}
}

// LayerTar writes entries as a tar stream with every timestamp at created, numeric owners only and no
// platform-dependent header fields, so equal entries give equal bytes on any machine. It returns the writer's error.
func LayerTar(w io.Writer, entries []Entry, created time.Time) error {
	tw := tar.NewWriter(w)
	for _, e := range entries {
		h := &tar.Header{Name: e.Path, Mode: e.Mode, Uid: e.UID, Gid: e.GID, ModTime: created.UTC(),
			Format: tar.FormatPAX}
		if e.Body == nil {
			h.Typeflag = tar.TypeDir
		} else {
			h.Typeflag, h.Size = tar.TypeReg, int64(len(e.Body))
		}
		if err := tw.WriteHeader(h); err != nil {
			return fmt.Errorf("tar header %s: %w", e.Path, err)
		}
		if e.Body != nil {
			if _, err := tw.Write(e.Body); err != nil {
				return fmt.Errorf("tar body %s: %w", e.Path, err)
			}
		}
	}
	if err := tw.Close(); err != nil {
		return fmt.Errorf("close tar: %w", err)
	}
	return nil
}

// binaryLayer builds the gzip-compressed OCI layer of the image name around the binary file bin, compressed once
// (the standard library's gzip with no header time is deterministic); it returns the layer and the binary's hex
// sha256.
func binaryLayer(name, bin string, created time.Time) (v1.Layer, string, error) {
	body, err := os.ReadFile(bin)
	if err != nil {
		return nil, "", fmt.Errorf("read binary: %w", err)
	}
	sum := sha256.Sum256(body)
	var gz bytes.Buffer
	zw, err := gzip.NewWriterLevel(&gz, gzip.BestSpeed)
	if err != nil {
		return nil, "", fmt.Errorf("gzip: %w", err)
	}
	if err := LayerTar(zw, Entries(name, body), created); err != nil {
		return nil, "", err
	}
	if err := zw.Close(); err != nil {
		return nil, "", fmt.Errorf("gzip: %w", err)
	}
	data := gz.Bytes()
	layer, err := tarball.LayerFromOpener(func() (io.ReadCloser, error) {
		return io.NopCloser(bytes.NewReader(data)), nil
	}, tarball.WithMediaType(types.OCILayer))
	if err != nil {
		return nil, "", fmt.Errorf("layer: %w", err)
	}
	return layer, hex.EncodeToString(sum[:]), nil
}
