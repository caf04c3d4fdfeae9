package render

import (
	"bytes"
	"errors"
	"fmt"
	"io/fs"
	"path"
	"strings"

	"helm.sh/helm/v3/pkg/chart"
	"helm.sh/helm/v3/pkg/chart/loader"
	"helm.sh/helm/v3/pkg/ignore"
)

// utf8BOM is the byte order mark Helm's directory loader strips from every chart file.
const utf8BOM = "\xEF\xBB\xBF"

// LoadFS loads the chart in folder dir of fsys (slash-separated, e.g. "kof-storage" of an embedded charts FS) the way
// Helm's directory loader loads a chart directory (helm.sh/helm/v3/pkg/chart/loader.LoadDir): the chart's
// .helmignore rules plus Helm's defaults, a leading UTF-8 byte order mark stripped, files over
// loader.MaxDecompressedFileSize and irregular files refused. It returns an error naming dir and the file for any of
// those, a file that cannot be read, or an invalid chart.
func LoadFS(fsys fs.FS, dir string) (*chart.Chart, error) {
	rules := ignore.Empty()
	if data, err := fs.ReadFile(fsys, path.Join(dir, ignore.HelmIgnore)); err == nil {
		if rules, err = ignore.Parse(bytes.NewReader(data)); err != nil {
			return nil, fmt.Errorf("load chart %q: parse %s: %w", dir, ignore.HelmIgnore, err)
		}
	} else if !errors.Is(err, fs.ErrNotExist) {
		return nil, fmt.Errorf("load chart %q: read %s: %w", dir, ignore.HelmIgnore, err)
	}
	rules.AddDefaults()
	var files []*loader.BufferedFile
	err := fs.WalkDir(fsys, dir, func(name string, d fs.DirEntry, err error) error {
		if err != nil {
			return err
		}
		rel := strings.TrimPrefix(strings.TrimPrefix(name, dir), "/")
		if rel == "" {
			return nil
		}
		fi, err := d.Info()
		if err != nil {
			return err
		}
		if rules.Ignore(rel, fi) {
			if d.IsDir() {
				return fs.SkipDir
			}
			return nil
		}
		if d.IsDir() {
			return nil
		}
		if !fi.Mode().IsRegular() {
			return fmt.Errorf("%s: not a regular file", rel)
		}
		if fi.Size() > loader.MaxDecompressedFileSize {
			return fmt.Errorf("%s: larger than the maximum chart file size %d", rel, loader.MaxDecompressedFileSize)
		}
		data, err := fs.ReadFile(fsys, name)
		if err != nil {
			return err
		}
		files = append(files, &loader.BufferedFile{Name: rel, Data: bytes.TrimPrefix(data, []byte(utf8BOM))})
		return nil
	})
	if err != nil {
		return nil, fmt.Errorf("load chart %q: %w", dir, err)
	}
	c, err := loader.LoadFiles(files)
	if err != nil {
		return nil, fmt.Errorf("load chart %q: %w", dir, err)
	}
	return c, nil
}
