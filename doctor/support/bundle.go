package support

import (
	"archive/tar"
	"bytes"
	"compress/gzip"
	"context"
	"encoding/json"
	"errors"
	"fmt"
	"io"
	"path"
	"sort"
	"time"

	"k8s.io/client-go/kubernetes"
	"sigs.k8s.io/controller-runtime/pkg/client"

	"kof.dev/kof/doctor/diagnose"
)

// Root is the folder every file of the archive lies in; ManifestFile is the manifest's name inside it.
const (
	Root         = "kof-support-bundle"
	ManifestFile = "manifest.json"
	// FormatVersion is Manifest.Format; it changes when the archive's layout does.
	FormatVersion = 1
)

// Defaults of Options.
const (
	DefaultLogLines = 2000
)

// Options says what to read and how.
type Options struct {
	// Reader reads the management cluster (diagnose.NewReader); only get and list are used.
	Reader client.Reader
	// Clientset lists Pods and reads their logs; nil skips the logs (recorded in Manifest.Unreadable).
	Clientset kubernetes.Interface
	// Read says where the umbrella release is; Predict configures the `kof render` prediction.
	Read    diagnose.ReadOptions
	Predict diagnose.PredictOptions
	// LogLines is how many of the newest lines of each container's log are kept (default DefaultLogLines);
	// LogSince, when set, keeps only lines younger than it.
	LogLines int64
	LogSince time.Duration
	// Server names the management cluster in the manifest (the API server's URL).
	Server string
	// Now is the bundle's creation time (default time.Now).
	Now func() time.Time
}

// Manifest is the archive's table of contents (Root/ManifestFile).
type Manifest struct {
	Format  int       `json:"format"`
	Created time.Time `json:"created"`
	Server  string    `json:"server,omitempty"`
	// Namespace and Release are the umbrella release the bundle looked at.
	Namespace string `json:"namespace"`
	Release   string `json:"release"`
	// Complete is false when anything could not be read: the bundle is partial, Unreadable says what is missing.
	Complete bool `json:"complete"`
	// Items are the archive's files, by path.
	Items []Item `json:"items"`
	// Unreadable lists every list or log the caller may not read, or that the API server does not serve.
	Unreadable []diagnose.Unreadable `json:"unreadable"`
	// Redactions is how many credential-looking values were replaced by Redacted.
	Redactions int `json:"redactions"`
	// Notes say what the bundle found absent (no kof-operator Pod, for example), which is not an error.
	Notes []string `json:"notes,omitempty"`
}

// Item is one file of the archive.
type Item struct {
	// Path is relative to Root.
	Path string `json:"path"`
	// What says what the file holds; Objects counts the objects (or lines of names) it holds, when it holds any.
	What    string `json:"what"`
	Objects int    `json:"objects,omitempty"`
	Bytes   int    `json:"bytes"`
}

// builder collects the archive's files, redacted, and their manifest entries.
type builder struct {
	redact   Redactor
	files    map[string][]byte
	manifest Manifest
}

// add stores data at p (relative to Root) after redaction.
func (b *builder) add(p, what string, objects int, data []byte) {
	data = []byte(b.redact.Text(string(data)))
	b.files[p] = data
	b.manifest.Items = append(b.manifest.Items, Item{Path: p, What: what, Objects: objects, Bytes: len(data)})
}

// addJSON stores v as indented JSON, every string of it redacted.
func (b *builder) addJSON(p, what string, v any) error {
	raw, err := json.Marshal(v)
	if err != nil {
		return fmt.Errorf("encode %s: %w", p, err)
	}
	var generic any
	if err := json.Unmarshal(raw, &generic); err != nil {
		return fmt.Errorf("decode %s: %w", p, err)
	}
	out, err := json.MarshalIndent(b.redact.Object(generic), "", "  ")
	if err != nil {
		return fmt.Errorf("encode %s: %w", p, err)
	}
	b.add(p, what, 0, append(out, '\n'))
	return nil
}

func (b *builder) unreadable(what string, err error) {
	b.manifest.Unreadable = append(b.manifest.Unreadable, diagnose.Unreadable{What: what, Reason: err.Error()})
}

// Write reads the management cluster as opts says and writes the bundle to w as a gzip-compressed tar archive:
// Root/ManifestFile first, then every item by path. It returns the manifest. What the caller may not read is
// recorded in Manifest.Unreadable and the bundle goes on; errors are other API failures of the snapshot
// (diagnose.Read) and write errors. A failed prediction is a file of the bundle (render/error.txt), not an error.
func Write(ctx context.Context, w io.Writer, opts Options) (*Manifest, error) {
	if opts.Reader == nil {
		return nil, errors.New("support bundle: no reader of the management cluster")
	}
	now := time.Now
	if opts.Now != nil {
		now = opts.Now
	}
	if opts.LogLines <= 0 {
		opts.LogLines = DefaultLogLines
	}
	snap, err := diagnose.Read(ctx, opts.Reader, opts.Read)
	if err != nil {
		return nil, err
	}
	b := &builder{files: map[string][]byte{}, manifest: Manifest{Format: FormatVersion, Created: now().UTC(),
		Server: opts.Server, Namespace: snap.Namespace, Release: snap.Release}}
	b.manifest.Unreadable = append(b.manifest.Unreadable, snap.Unreadable...)

	pred, info := diagnose.Predict(ctx, snap, opts.Predict)
	d := diagnose.Diagnose(diagnose.Input{Live: snap, Predicted: pred, Prediction: info,
		ChartsDir: opts.Predict.ChartsDir, Charts: opts.Predict.Charts})
	if err := b.diagnosis(d); err != nil {
		return nil, err
	}
	if err := b.objects(snap); err != nil {
		return nil, err
	}
	if err := b.versions(snap, opts.Predict); err != nil {
		return nil, err
	}
	if err := b.prediction(pred, info); err != nil {
		return nil, err
	}
	b.logs(ctx, opts)

	m := b.manifest
	m.Redactions = b.redact.Count
	m.Complete = len(m.Unreadable) == 0
	sort.Slice(m.Items, func(i, j int) bool { return m.Items[i].Path < m.Items[j].Path })
	sort.SliceStable(m.Unreadable, func(i, j int) bool { return m.Unreadable[i].What < m.Unreadable[j].What })
	if err := archive(w, &m, b.files); err != nil {
		return nil, err
	}
	return &m, nil
}

// diagnosis adds the diagnosis as `kof doctor -o json` and `kof doctor` print it.
func (b *builder) diagnosis(d *diagnose.Diagnosis) error {
	if err := b.addJSON("diagnosis/diagnosis.json", "kof doctor diagnosis (JSON, as kof doctor -o json)", d); err != nil {
		return err
	}
	var text bytes.Buffer
	if err := diagnose.WriteText(&text, d.Clusters, d.AllFindings()); err != nil {
		return fmt.Errorf("diagnosis text: %w", err)
	}
	b.add("diagnosis/diagnosis.txt", "kof doctor diagnosis (text, as kof doctor)", 0, text.Bytes())
	return nil
}

// archive writes the manifest and files as a gzip-compressed tar stream, every entry under Root, mode 0644, with
// the manifest's creation time.
func archive(w io.Writer, m *Manifest, files map[string][]byte) error {
	raw, err := json.MarshalIndent(m, "", "  ")
	if err != nil {
		return fmt.Errorf("encode manifest: %w", err)
	}
	gz := gzip.NewWriter(w)
	tw := tar.NewWriter(gz)
	put := func(name string, data []byte) error {
		h := &tar.Header{Name: path.Join(Root, name), Mode: 0o644, Size: int64(len(data)), ModTime: m.Created,
			Typeflag: tar.TypeReg, Format: tar.FormatPAX}
		if err := tw.WriteHeader(h); err != nil {
			return fmt.Errorf("write %s: %w", name, err)
		}
		if _, err := tw.Write(data); err != nil {
			return fmt.Errorf("write %s: %w", name, err)
		}
		return nil
	}
	if err := put(ManifestFile, append(raw, '\n')); err != nil {
		return err
	}
	for _, it := range m.Items {
		if err := put(it.Path, files[it.Path]); err != nil {
			return err
		}
	}
	if err := tw.Close(); err != nil {
		return fmt.Errorf("close archive: %w", err)
	}
	if err := gz.Close(); err != nil {
		return fmt.Errorf("close archive: %w", err)
	}
	return nil
}
