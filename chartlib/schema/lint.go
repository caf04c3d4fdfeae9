package schema

import (
	"fmt"
	"regexp"
	"strings"
)

// docStart matches the first line of a helm-docs description (`# -- text`, optionally `# key.path -- text`).
var docStart = regexp.MustCompile(`^\s*#\s*(\S*\s+)?--(\s|$)`)

// markerLine matches a `# @schema` marker line.
var markerLine = regexp.MustCompile(`^\s*#\s*@schema(\s|$)`)

// Lint returns the problems of a values.yaml that the generator tolerates but its readers would not: `@schema`
// marker lines written below a `# --` description in the same comment block, which helm-docs would copy into the
// README. Each problem names the 1-based line and the fix.
func Lint(values []byte) []string {
	var out []string
	inDoc := false
	for i, line := range strings.Split(string(values), "\n") {
		trimmed := strings.TrimSpace(line)
		switch {
		case !strings.HasPrefix(trimmed, "#"):
			inDoc = false
		case docStart.MatchString(line):
			inDoc = true
		case inDoc && markerLine.MatchString(line):
			out = append(out, fmt.Sprintf("line %d: @schema marker below the `# --` description would appear in "+
				"the helm-docs README; move it above the `# --` line", i+1))
		}
	}
	return out
}
