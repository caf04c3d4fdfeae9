package diff

import (
	"encoding/json"
	"fmt"
	"reflect"
	"regexp"
	"strings"
	"time"

	"github.com/google/go-cmp/cmp"
	"github.com/google/go-cmp/cmp/cmpopts"

	"kof.dev/kof/chartlib/manifest"
)

// Field is one field-level change: the value at Path before (Old) and after (New). Change is Added (no Old),
// Removed (no New) or Changed.
type Field struct {
	// Path is the field's path, e.g. `spec.template.spec.containers[0].image` or `metadata.labels["app.kubernetes.io/version"]`.
	Path   string `json:"path"`
	Change Status `json:"change"`
	Old    any    `json:"old,omitempty"`
	New    any    `json:"new,omitempty"`
	// Lines is go-cmp's line diff (cmp.Diff) when Old and New are both multi-line strings (a template text, an
	// embedded configuration), "" otherwise.
	Lines string `json:"lines,omitempty"`
}

// String formats the field as `path: old → new`, `path: + new` or `path: - old`, values as compact JSON cut at
// 200 characters; a changed multi-line text as `path: lines (-old +new):` and its line diff.
func (f Field) String() string {
	switch f.Change {
	case Added:
		return f.Path + ": + " + short(f.New)
	case Removed:
		return f.Path + ": - " + short(f.Old)
	default:
		if f.Lines != "" {
			return f.Path + ": lines (-old +new):\n" + f.Lines
		}
		return f.Path + ": " + short(f.Old) + " → " + short(f.New)
	}
}

// short returns v as compact JSON, at most 200 characters.
func short(v any) string {
	var b strings.Builder
	enc := json.NewEncoder(&b)
	enc.SetEscapeHTML(false)
	var s string
	if err := enc.Encode(v); err != nil {
		s = fmt.Sprint(v)
	} else {
		s = strings.TrimSuffix(b.String(), "\n")
	}
	if len(s) > 200 {
		s = s[:197] + "..."
	}
	return s
}

// Fields returns the field-level differences of two decoded YAML/JSON documents (maps, slices and scalars), as
// go-cmp finds them (an empty map or list equals an absent one; list elements are aligned by go-cmp's edit
// script). With redact, the values under `data` and `stringData` (a Secret's) are replaced by a digest, so no
// credential is printed.
func Fields(old, new any, redact bool) []Field {
	return fields(old, new, redact, false)
}

// fields is Fields; with live (one side was read from a live cluster), two strings that are both Go durations
// are equal when their durations are: the API server and the controllers' Go types write `10m` back as `10m0s`
// (metav1.Duration), so a live object's durations seldom read as the chart wrote them.
func fields(old, new any, redact, live bool) []Field {
	r := &reporter{redact: redact}
	opts := []cmp.Option{cmpopts.EquateEmpty(), cmp.Reporter(r)}
	if live {
		opts = append(opts, cmp.FilterValues(bothDurations, cmp.Comparer(sameDuration)))
	}
	cmp.Equal(old, new, opts...)
	return r.fields
}

// bothDurations reports whether a and b both parse as Go durations (time.ParseDuration).
func bothDurations(a, b string) bool {
	_, errA := time.ParseDuration(a)
	_, errB := time.ParseDuration(b)
	return errA == nil && errB == nil
}

// sameDuration reports whether durations a and b (both valid, bothDurations) are equal.
func sameDuration(a, b string) bool {
	da, _ := time.ParseDuration(a)
	db, _ := time.ParseDuration(b)
	return da == db
}

// reporter collects the differing leaves of a cmp.Equal walk (go-cmp's Reporter interface).
type reporter struct {
	path   cmp.Path
	redact bool
	fields []Field
}

// PushStep descends into a step of the walk.
func (r *reporter) PushStep(ps cmp.PathStep) { r.path = append(r.path, ps) }

// PopStep leaves the last step.
func (r *reporter) PopStep() { r.path = r.path[:len(r.path)-1] }

// Report records a differing leaf.
func (r *reporter) Report(rs cmp.Result) {
	if rs.Equal() {
		return
	}
	vx, vy := r.path.Last().Values()
	f := Field{Path: formatPath(r.path), Change: Changed}
	switch {
	case !vx.IsValid():
		f.Change = Added
	case !vy.IsValid():
		f.Change = Removed
	}
	f.Old, f.New = value(vx), value(vy)
	if r.redact && secretPath(f.Path) {
		f.Old, f.New = manifest.Redacted(f.Old), manifest.Redacted(f.New)
	}
	if a, ok := f.Old.(string); ok && strings.Contains(a, "\n") {
		if b, ok := f.New.(string); ok && strings.Contains(b, "\n") {
			f.Lines = cmp.Diff(strings.Split(a, "\n"), strings.Split(b, "\n"))
		}
	}
	r.fields = append(r.fields, f)
}

// value returns the interface value of v, nil when v is invalid.
func value(v reflect.Value) any {
	if !v.IsValid() || !v.CanInterface() {
		return nil
	}
	return v.Interface()
}

// secretPath reports whether path lies under a Secret's data or stringData.
func secretPath(path string) bool {
	return strings.HasPrefix(path, "data") || strings.HasPrefix(path, "stringData")
}

// plainKey matches a map key written as `.key` in a path; others are written `["key"]`.
var plainKey = regexp.MustCompile(`^[A-Za-z_][A-Za-z0-9_-]*$`)

// formatPath writes a go-cmp path as `a.b[0]["c.d"]`, skipping type assertions and indirections; the root is `.`.
func formatPath(p cmp.Path) string {
	if s := stepsPath(p); s != "" {
		return s
	}
	return "."
}

// stepsPath writes the map and slice steps of p.
func stepsPath(p cmp.Path) string {
	var b strings.Builder
	for _, step := range p {
		switch s := step.(type) {
		case cmp.MapIndex:
			key := fmt.Sprint(s.Key().Interface())
			if plainKey.MatchString(key) {
				if b.Len() > 0 {
					b.WriteByte('.')
				}
				b.WriteString(key)
			} else {
				fmt.Fprintf(&b, "[%q]", key)
			}
		case cmp.SliceIndex:
			i := s.Key()
			if i < 0 {
				if ix, iy := s.SplitKeys(); ix >= 0 {
					i = ix
				} else {
					i = iy
				}
			}
			fmt.Fprintf(&b, "[%d]", i)
		}
	}
	return b.String()
}
