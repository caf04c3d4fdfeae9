package layout

import (
	"fmt"
	"path"
	"regexp"
	"sort"
	"strings"
)

// AgentsFile is the repository-relative path of the folder map.
const AgentsFile = "docs/AGENTS.md"

// coverage says which folders a row's path covers.
type coverage int

const (
	// exact: `dir` covers dir only.
	exact coverage = iota
	// tree: `dir/` covers dir and every folder below it.
	tree
	// below: `dir/*` covers every folder below dir, not dir itself.
	below
)

// pattern is one backticked path of a row's first cell.
type pattern struct {
	raw  string
	dir  string
	mode coverage
}

// covers reports whether p covers the slash-separated folder dir.
func (p pattern) covers(dir string) bool {
	switch p.mode {
	case tree:
		return dir == p.dir || strings.HasPrefix(dir, p.dir+"/")
	case below:
		return strings.HasPrefix(dir, p.dir+"/")
	default:
		return dir == p.dir
	}
}

// backticked matches one `code span` of a table cell.
var backticked = regexp.MustCompile("`([^`]+)`")

// parseRows returns the paths named in the first cell of every row of the Markdown table in md (the header and the
// `|---|` separator excluded). A row whose first cell names no backticked path is an error giving its line number.
func parseRows(md string) ([]pattern, error) {
	var out []pattern
	header := true
	for i, line := range strings.Split(md, "\n") {
		line = strings.TrimSpace(line)
		if !strings.HasPrefix(line, "|") {
			header = true
			continue
		}
		cells := strings.Split(strings.Trim(line, "|"), "|")
		first := strings.TrimSpace(cells[0])
		if header || strings.Trim(first, "-: ") == "" {
			header = false
			continue
		}
		found := backticked.FindAllStringSubmatch(first, -1)
		if len(found) == 0 {
			return nil, fmt.Errorf("%s line %d: first cell %q names no folder; write it as `path`, `path/` or `path/*`",
				AgentsFile, i+1, first)
		}
		for _, m := range found {
			out = append(out, newPattern(m[1]))
		}
	}
	return out, nil
}

// newPattern parses one row path: `dir/*` (below), `dir/` (tree) or `dir` (exact).
func newPattern(raw string) pattern {
	switch {
	case strings.HasSuffix(raw, "/*"):
		return pattern{raw: raw, dir: strings.TrimSuffix(raw, "/*"), mode: below}
	case strings.HasSuffix(raw, "/"):
		return pattern{raw: raw, dir: strings.TrimSuffix(raw, "/"), mode: tree}
	default:
		return pattern{raw: raw, dir: raw, mode: exact}
	}
}

// folders returns the sorted folders that directly hold one of files (slash-separated, repository-relative), leaving
// out the root and every folder at or below a `testdata` folder (test data belongs to its package's row).
func folders(files []string) []string {
	seen := map[string]bool{}
	for _, f := range files {
		dir := path.Dir(f)
		if dir == "." || inTestdata(dir) {
			continue
		}
		seen[dir] = true
	}
	out := make([]string, 0, len(seen))
	for d := range seen {
		out = append(out, d)
	}
	sort.Strings(out)
	return out
}

// inTestdata reports whether one segment of dir is `testdata`.
func inTestdata(dir string) bool {
	for _, s := range strings.Split(dir, "/") {
		if s == "testdata" {
			return true
		}
	}
	return false
}

// problems returns one message per folder no pattern covers, naming the folder and the row to add to AgentsFile,
// then one per pattern that covers no folder (a stale row).
func problems(dirs []string, patterns []pattern) []string {
	var out []string
	used := make([]bool, len(patterns))
	for _, d := range dirs {
		ok := false
		for i, p := range patterns {
			if p.covers(d) {
				ok, used[i] = true, true
			}
		}
		if !ok {
			out = append(out, fmt.Sprintf("folder %s has no row in %s: add the row "+
				"\"| `%s` | <what it holds> | <its generated files (by), or —> |\" to its table", d, AgentsFile, d))
		}
	}
	for i, p := range patterns {
		if !used[i] {
			out = append(out, fmt.Sprintf("%s: row `%s` matches no folder that holds files; fix or remove it",
				AgentsFile, p.raw))
		}
	}
	return out
}

// duplicates returns one message per path that more than one row names.
func duplicates(patterns []pattern) []string {
	seen := map[string]int{}
	var out []string
	for _, p := range patterns {
		seen[p.raw]++
		if seen[p.raw] == 2 {
			out = append(out, fmt.Sprintf("%s: rows name `%s` more than once; keep one row per path", AgentsFile, p.raw))
		}
	}
	return out
}
