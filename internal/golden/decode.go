package golden

import (
	"fmt"
	"path"
	"strings"
)

// stored is one decoded stored file: the base and the content of each non-base user (see userKey).
type stored struct {
	base  string
	users map[string]string
}

// decodeStore returns the logical files a store holds (the inverse of encodeStore). It returns an error naming the
// store file and line for anything encodeStore does not write: an unknown or unreadable line, a document that names
// a missing stored file, or a hunk whose removed lines are not those of the base.
func decodeStore(store map[string][]byte) (map[string][]byte, error) {
	objects := map[string]stored{}
	out := map[string][]byte{}
	for name, data := range store {
		if rest, ok := strings.CutPrefix(name, objectsDir+"/"); ok {
			s, err := decodeStored(string(data))
			if err != nil {
				return nil, fmt.Errorf("golden: %s: %w", name, err)
			}
			objects[rest] = s
		}
	}
	for name, data := range store {
		if strings.HasPrefix(name, objectsDir+"/") {
			continue
		}
		seg, ok := strings.CutSuffix(name, indexSuffix)
		if !ok || strings.Contains(seg, "/") {
			return nil, fmt.Errorf("golden: %s: neither an index (<case>%s) nor under %s/", name, indexSuffix, objectsDir)
		}
		if err := decodeIndex(seg, string(data), objects, out); err != nil {
			return nil, fmt.Errorf("golden: %s: %w", name, err)
		}
	}
	return out, nil
}

// decodeIndex adds the logical files of the index of case seg to out.
func decodeIndex(seg, text string, objects map[string]stored, out map[string][]byte) error {
	var cur *logical
	var docs []string
	seen := map[string]int{}
	flush := func() {
		if cur != nil {
			out[path.Join(seg, cur.path)] = []byte(joinDocuments(cur.stream, docs))
		}
	}
	for i, line := range strings.Split(strings.TrimSuffix(text, "\n"), "\n") {
		if name, ok := strings.CutPrefix(line, refIndent); ok {
			if cur == nil || cur.empty || !cur.stream && len(docs) == 1 {
				return fmt.Errorf("line %d: document %q where none belongs", i+1, name)
			}
			s, ok := objects[name]
			if !ok {
				return fmt.Errorf("line %d: no stored file %s/%s", i+1, objectsDir, name)
			}
			doc, ok := s.users[userKey(path.Join(seg, cur.path), seen[name])]
			if !ok {
				doc = s.base
			}
			seen[name]++
			docs = append(docs, doc)
			continue
		}
		flush()
		cur, docs, seen = &logical{}, nil, map[string]int{}
		switch {
		case strings.HasSuffix(line, markEmpty):
			cur.path, cur.empty = strings.TrimSuffix(line, markEmpty), true
		case strings.HasSuffix(line, markStream):
			cur.path, cur.stream = strings.TrimSuffix(line, markStream), true
		default:
			cur.path = line
		}
		if cur.path == "" || strings.HasPrefix(line, " ") {
			return fmt.Errorf("line %d: %q is neither a path nor an indented document", i+1, line)
		}
	}
	flush()
	return nil
}

// decodeStored parses a stored file (the inverse of identity.encode).
func decodeStored(text string) (stored, error) {
	lines, ok := strings.CutSuffix(text, "\n")
	if !ok {
		return stored{}, fmt.Errorf("does not end with a newline")
	}
	all := strings.Split(lines, "\n")
	var n int
	if _, err := fmt.Sscanf(all[0], baseHeader, &n); err != nil || n < 1 || n > len(all)-1 {
		return stored{}, fmt.Errorf("line 1: %q: want `%s` followed by N lines", all[0], baseHeader)
	}
	base := all[1 : 1+n]
	s := stored{base: strings.Join(base, "\n"), users: map[string]string{}}
	for i := 1 + n; i < len(all); {
		if all[i] != variantHeader {
			return stored{}, fmt.Errorf("line %d: %q: want %q", i+1, all[i], variantHeader)
		}
		i++
		var users []string
		for ; i < len(all) && strings.HasPrefix(all[i], refIndent); i++ {
			users = append(users, strings.TrimPrefix(all[i], refIndent))
		}
		if len(users) == 0 {
			return stored{}, fmt.Errorf("line %d: a variant without the logical files that hold it", i)
		}
		var got []string
		cursor := 0
		for i < len(all) && strings.HasPrefix(all[i], "@@ ") {
			var start, removed, added int
			if _, err := fmt.Sscanf(all[i], hunkHeader, &start, &removed, &added); err != nil ||
				start-1 < cursor || start-1+removed > len(base) {
				return stored{}, fmt.Errorf("line %d: %q: not a hunk of the base", i+1, all[i])
			}
			got = append(got, base[cursor:start-1]...)
			i++
			for k := 0; k < removed; k, i = k+1, i+1 {
				if i >= len(all) || all[i] != "-"+base[start-1+k] {
					return stored{}, fmt.Errorf("line %d: want the removed line -%s of the base", i+1, base[start-1+k])
				}
			}
			for k := 0; k < added; k, i = k+1, i+1 {
				if i >= len(all) || !strings.HasPrefix(all[i], "+") {
					return stored{}, fmt.Errorf("line %d: want an added line (+...)", i+1)
				}
				got = append(got, all[i][1:])
			}
			cursor = start - 1 + removed
		}
		content := strings.Join(append(got, base[cursor:]...), "\n")
		for _, u := range users {
			s.users[u] = content
		}
	}
	return s, nil
}
