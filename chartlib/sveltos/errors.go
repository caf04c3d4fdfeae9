package sveltos

import (
	"fmt"
	"regexp"
	"strconv"
	"strings"
)

// Error is a failure to instantiate one service's values for one cluster. It names the MultiClusterService (or
// Profile), the service, the cluster, the stage that failed and, when known, the line of the template text.
type Error struct {
	// Profile, Service and Cluster ("namespace/name") say which instantiation failed.
	Profile, Service, Cluster string
	// Stage is what failed: "pass 1 of 2 (values)", "pass 2 of 2", "parse values", "valuesFrom[0]", ...
	Stage string
	// Line is the 1-based line of the template text the failure points at, 0 when unknown.
	Line int
	// Source is the text of that line.
	Source string
	// Hint says how to fix or diagnose the failure, "" when there is nothing to add.
	Hint string
	// Err is the underlying error (a text/template, YAML or lookup error).
	Err error
}

// Error formats the failure on one line: mcs, service, cluster, stage, line, cause, hint.
func (e *Error) Error() string {
	var b strings.Builder
	fmt.Fprintf(&b, "mcs %q service %q cluster %q: %s", e.Profile, e.Service, e.Cluster, e.Stage)
	if e.Line > 0 {
		fmt.Fprintf(&b, ", line %d %q", e.Line, strings.TrimSpace(e.Source))
	}
	fmt.Fprintf(&b, ": %v", e.Err)
	if e.Hint != "" {
		b.WriteString("; " + e.Hint)
	}
	return b.String()
}

// Unwrap returns the underlying error.
func (e *Error) Unwrap() error { return e.Err }

// MissingObjectError is a required templateResourceRefs or valuesFrom entry whose object does not exist, as
// addon-controller reports it (controllers/templateresourcedef_utils.go): the entry (Where; empty when the wrapping
// *Error's Stage names it), and the object's kind, namespace and name.
type MissingObjectError struct {
	Where, Kind, Namespace, Name string
}

// Error names the entry and the object and says how to fix it.
func (e *MissingObjectError) Error() string {
	msg := fmt.Sprintf("%s %s/%s not found; create it or set optional: true", e.Kind, e.Namespace, e.Name)
	if e.Where == "" {
		return msg // the wrapping error names the entry (an *Error's Stage)
	}
	return e.Where + ": " + msg
}

var (
	// templateLine finds the line in a text/template error ("template: NAME:LINE:COL: ..." or "NAME:LINE: ...").
	templateLine = regexp.MustCompile(`template: [^:]*:(\d+)`) //nolint:gochecknoglobals // compiled once, read-only
	// startedAt finds where an unclosed action starts ("unclosed action started at NAME:LINE").
	startedAt = regexp.MustCompile(`started at [^:]*:(\d+)`) //nolint:gochecknoglobals // compiled once, read-only
	// yamlLine finds the line in a YAML error ("yaml: line 3: ...").
	yamlLine = regexp.MustCompile(`line (\d+)`) //nolint:gochecknoglobals // compiled once, read-only
)

// errorLine extracts the line number an error points at with re, 0 when none.
func errorLine(err error, re *regexp.Regexp) int {
	m := re.FindStringSubmatch(err.Error())
	if m == nil {
		return 0
	}
	n, convErr := strconv.Atoi(m[1])
	if convErr != nil {
		return 0
	}
	return n
}

// lineOf returns line n (1-based) of text, "" when out of range.
func lineOf(text string, n int) string {
	if n < 1 {
		return ""
	}
	lines := strings.Split(text, "\n")
	if n > len(lines) {
		return ""
	}
	return lines[n-1]
}
