package diff

import (
	"encoding/json"
	"fmt"
	"io"
	"strings"
)

// Markers of the text output: added, removed, changed or moved.
var marker = map[Status]string{Added: "+", Removed: "-", Changed: "~", Moved: ">"}

// WriteText prints r for people: per changed cluster, per changed release, its fields and values, then each object
// added (+), removed (-), changed (~) or moved (>) with its field-level changes, and every change that hurts
// (`HURTS <reason>: <message>`) under what it concerns; then one summary line and the list of every change that
// hurts. Unchanged clusters are only counted. It returns the first write error.
func WriteText(w io.Writer, r *Report) error {
	b := &strings.Builder{}
	for _, c := range r.Clusters {
		if c.Status == Unchanged {
			continue
		}
		fmt.Fprintf(b, "cluster %s (%s): %s\n", c.Dir, c.Role, c.Status)
		for _, p := range c.Problems {
			fmt.Fprintf(b, "  problem: %s\n", p)
		}
		writeHurts(b, "  ", c.Hurts)
		for _, rel := range c.Releases {
			fmt.Fprintf(b, "  %s release %s/%s (%s): %s\n", marker[rel.Status], rel.Namespace, rel.Name, rel.Via,
				rel.Status)
			for _, f := range rel.Fields {
				writeField(b, "      ", f)
			}
			if len(rel.Values) > 0 {
				fmt.Fprintf(b, "    values:\n")
				for _, f := range rel.Values {
					writeField(b, "      ", f)
				}
			}
			writeHurts(b, "    ", rel.Hurts)
			for _, o := range rel.Objects {
				line := fmt.Sprintf("    %s %s", marker[o.Status], o.Key)
				if o.Status == Moved {
					line += " → release " + o.MovedTo
				}
				fmt.Fprintln(b, line)
				for _, f := range o.Fields {
					writeField(b, "        ", f)
				}
				writeHurts(b, "        ", o.Hurts)
			}
		}
	}
	s := r.Summary
	fmt.Fprintf(b, "%d clusters: %d changed, %d unchanged; releases: %d added, %d removed, %d changed; objects: %d "+
		"added, %d removed, %d changed, %d unchanged; %d changes that hurt\n", s.Clusters, s.ChangedClusters,
		s.Clusters-s.ChangedClusters, s.ReleasesAdded, s.ReleasesRemoved, s.ReleasesChanged, s.ObjectsAdded,
		s.ObjectsRemoved, s.ObjectsChanged, s.ObjectsUnchanged, s.ChangesThatHurt)
	for _, h := range r.Hurts() {
		where := h.Cluster
		if h.Release != "" {
			where += " " + h.Release
		}
		if h.Object != "" {
			where += " " + h.Object
		}
		fmt.Fprintf(b, "HURTS %s: %s\n", where, h.Hurt)
	}
	if _, err := io.WriteString(w, b.String()); err != nil {
		return fmt.Errorf("write diff: %w", err)
	}
	return nil
}

// writeField writes f at indent, each line of a line diff indented further.
func writeField(b *strings.Builder, indent string, f Field) {
	lines := strings.Split(strings.TrimRight(f.String(), "\n"), "\n")
	fmt.Fprintf(b, "%s%s\n", indent, lines[0])
	for _, l := range lines[1:] {
		fmt.Fprintf(b, "%s  %s\n", indent, l)
	}
}

func writeHurts(b *strings.Builder, indent string, hs []Hurt) {
	for _, h := range hs {
		fmt.Fprintf(b, "%sHURTS %s\n", indent, h)
	}
}

// WriteJSON prints r as indented JSON (Report's fields, with `hurts`: every change that hurts, located).
func WriteJSON(w io.Writer, r *Report) error {
	out := struct {
		*Report
		Hurts    []Located `json:"hurts"`
		ExitCode int       `json:"exitCode"`
	}{Report: r, Hurts: r.Hurts(), ExitCode: r.ExitCode()}
	if out.Hurts == nil {
		out.Hurts = []Located{}
	}
	enc := json.NewEncoder(w)
	enc.SetIndent("", "  ")
	enc.SetEscapeHTML(false)
	if err := enc.Encode(out); err != nil {
		return fmt.Errorf("write diff json: %w", err)
	}
	return nil
}
