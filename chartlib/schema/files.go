package schema

import (
	"bytes"
	"fmt"
	"os"
	"path/filepath"
	"sort"
)

// Modeline is the first line of every chart's values.yaml: it points editors (yaml-language-server) at the chart's
// schema for completion and validation.
const Modeline = "# yaml-language-server: $schema=values.schema.json"

// Drift is one generated file that is missing or differs from what the generator produces.
type Drift struct {
	// Path is the file, relative to the working directory as given.
	Path string
	// Message says what differs and how to fix it.
	Message string
}

// String returns `path: message`.
func (d Drift) String() string { return d.Path + ": " + d.Message }

// Charts returns the names of the chart directories under chartsDir that have a values.yaml, sorted.
func Charts(chartsDir string) ([]string, error) {
	matches, err := filepath.Glob(filepath.Join(chartsDir, "*", "values.yaml"))
	if err != nil {
		return nil, fmt.Errorf("list charts in %q: %w", chartsDir, err)
	}
	var out []string
	for _, m := range matches {
		if _, err := os.Stat(filepath.Join(filepath.Dir(m), "Chart.yaml")); err == nil {
			out = append(out, filepath.Base(filepath.Dir(m)))
		}
	}
	sort.Strings(out)
	return out, nil
}

// RequireCharts returns Charts(chartsDir), or an error naming chartsDir when it holds no chart.
func RequireCharts(chartsDir string) ([]string, error) {
	all, err := Charts(chartsDir)
	if err == nil && len(all) == 0 {
		err = fmt.Errorf("no chart (a folder with Chart.yaml and values.yaml) under %q", chartsDir)
	}
	return all, err
}

// Sync generates the schema of each named chart (all charts of chartsDir when names is empty) and compares it with
// `<schemasDir>/<chart>.schema.json` and `<chartsDir>/<chart>/values.schema.json`; it also checks that the
// chart's values.yaml starts with Modeline and passes Lint (lint problems are reported in both modes, never fixed).
// Each schema is composed with handoffs (see GenerateComposed; nil composes nothing).
// With write, it rewrites what differs (prepending the modeline and a
// blank line to values.yaml where missing) and returns what it changed; without, it changes nothing and returns
// the drift. It returns an error if chartsDir holds no chart while names is empty (a run outside a checkout would
// otherwise check nothing and pass), if a chart cannot be read or generated, or a file cannot be written.
func Sync(chartsDir, schemasDir string, names []string, handoffs Handoffs, write bool) ([]Drift, error) {
	if len(names) == 0 {
		all, err := RequireCharts(chartsDir)
		if err != nil {
			return nil, fmt.Errorf("%w: run it from a KOF checkout, or pass --charts and --schemas", err)
		}
		names = all
	}
	var out []Drift
	for _, name := range names {
		dir := filepath.Join(chartsDir, name)
		gen, err := GenerateComposed(chartsDir, name, handoffs)
		if err != nil {
			return nil, err
		}
		for _, target := range []string{filepath.Join(schemasDir, name+".schema.json"),
			filepath.Join(dir, "values.schema.json")} {
			d, err := syncFile(target, gen, write)
			if err != nil {
				return nil, err
			}
			out = append(out, d...)
		}
		valuesFile := filepath.Join(dir, "values.yaml")
		d, err := syncModeline(valuesFile, write)
		if err != nil {
			return nil, err
		}
		out = append(out, d...)
		data, err := os.ReadFile(valuesFile)
		if err != nil {
			return nil, fmt.Errorf("read %s: %w", valuesFile, err)
		}
		for _, p := range Lint(data) {
			out = append(out, Drift{Path: valuesFile, Message: p})
		}
	}
	return out, nil
}

// syncFile compares (and with write, rewrites) one generated file.
func syncFile(path string, want []byte, write bool) ([]Drift, error) {
	got, err := os.ReadFile(path)
	switch {
	case err == nil && bytes.Equal(got, want):
		return nil, nil
	case err != nil && !os.IsNotExist(err):
		return nil, fmt.Errorf("read %s: %w", path, err)
	}
	msg := "differs from the schema generated from values.yaml; run `kof schema generate`"
	if err != nil {
		msg = "missing; run `kof schema generate`"
	}
	if !write {
		return []Drift{{Path: path, Message: msg}}, nil
	}
	if err := os.MkdirAll(filepath.Dir(path), 0o755); err != nil {
		return nil, fmt.Errorf("create directory of %s: %w", path, err)
	}
	if err := os.WriteFile(path, want, 0o644); err != nil {
		return nil, fmt.Errorf("write %s: %w", path, err)
	}
	return []Drift{{Path: path, Message: "written"}}, nil
}

// syncModeline checks (and with write, adds) the editor modeline at the top of a values.yaml.
func syncModeline(path string, write bool) ([]Drift, error) {
	data, err := os.ReadFile(path)
	if err != nil {
		return nil, fmt.Errorf("read %s: %w", path, err)
	}
	if bytes.HasPrefix(data, []byte(Modeline+"\n")) {
		return nil, nil
	}
	if !write {
		return []Drift{{Path: path, Message: "first line is not `" + Modeline + "`; run `kof schema generate`"}}, nil
	}
	fixed := append([]byte(Modeline+"\n\n"), data...)
	if err := os.WriteFile(path, fixed, 0o644); err != nil {
		return nil, fmt.Errorf("write %s: %w", path, err)
	}
	return []Drift{{Path: path, Message: "modeline added"}}, nil
}
