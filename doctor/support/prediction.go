package support

import (
	"bytes"
	"fmt"
	"io/fs"
	"os"
	"path/filepath"
	"strings"

	"sigs.k8s.io/yaml"

	"kof.dev/kof/chartlib/fleet"
	"kof.dev/kof/chartlib/manifest"
	"kof.dev/kof/doctor/diagnose"
)

// prediction adds the `kof render` prediction under render/: the summary table and the files fleet.Write writes
// per cluster and service; a Secret of a rendered manifest keeps only its metadata. A failed prediction is
// render/error.txt.
func (b *builder) prediction(f *fleet.Fleet, info diagnose.PredictionInfo) error {
	if f == nil {
		b.add("render/error.txt", "why the kof render prediction failed", 0, []byte(info.Error+"\n"))
		return nil
	}
	var sum bytes.Buffer
	if err := fleet.Summary(&sum, f); err != nil {
		return fmt.Errorf("prediction summary: %w", err)
	}
	b.add("render/summary.txt", "kof render summary of the prediction ("+info.Charts+"; layer 1 from "+
		info.Layer1+")", len(f.Clusters), sum.Bytes())
	dir, err := os.MkdirTemp("", "kof-support-bundle-")
	if err != nil {
		return fmt.Errorf("prediction: %w", err)
	}
	defer os.RemoveAll(dir)
	if err := fleet.Write(dir, f); err != nil {
		return fmt.Errorf("prediction: %w", err)
	}
	return filepath.WalkDir(dir, func(p string, d fs.DirEntry, err error) error {
		if err != nil || d.IsDir() {
			return err
		}
		rel, err := filepath.Rel(dir, p)
		if err != nil {
			return err
		}
		data, err := os.ReadFile(p)
		if err != nil {
			return fmt.Errorf("prediction: %w", err)
		}
		what, objects := "kof render prediction", 0
		if d.Name() == fleet.ManifestFile {
			if data, objects, err = b.withoutSecretData(rel, data); err != nil {
				return err
			}
			what = "kof render prediction: rendered objects"
		}
		b.add("render/"+filepath.ToSlash(rel), what, objects, data)
		return nil
	})
}

// withoutSecretData re-marshals a rendered manifest with every Secret's data and stringData removed and every
// value redacted, and counts its objects.
func (b *builder) withoutSecretData(source string, data []byte) ([]byte, int, error) {
	docs, err := manifest.ParseDocuments(source, data)
	if err != nil {
		return nil, 0, fmt.Errorf("prediction %s: %w", source, err)
	}
	var out []string
	for _, d := range docs {
		if d.GetKind() == "Secret" && d.GetAPIVersion() == "v1" {
			delete(d.Object, "data")
			delete(d.Object, "stringData")
		}
		raw, err := yaml.Marshal(b.redact.Object(d.Object))
		if err != nil {
			return nil, 0, fmt.Errorf("prediction %s: %w", source, err)
		}
		out = append(out, string(raw))
	}
	return []byte("---\n" + strings.Join(out, "---\n")), len(docs), nil
}
