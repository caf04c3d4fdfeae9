package golden

import (
	"fmt"
	"strconv"
	"strings"
)

// Field returns the value at path in obj. path is dot-separated keys with `[i]` list indexes and `["key"]` for
// keys that contain dots or slashes: `spec.containers[0].args`, `metadata.annotations["k0rdent.mirantis.com/x"]`.
// It returns an error naming the first segment that does not exist or has the wrong type.
func Field(obj map[string]any, path string) (any, error) {
	segs, err := splitPath(path)
	if err != nil {
		return nil, err
	}
	var cur any = obj
	walked := ""
	for _, s := range segs {
		switch c := cur.(type) {
		case map[string]any:
			if s.index >= 0 {
				return nil, fmt.Errorf("%s: is a map, not a list", orRoot(walked))
			}
			v, ok := c[s.key]
			if !ok {
				return nil, fmt.Errorf("%s: no key %q", orRoot(walked), s.key)
			}
			cur, walked = v, joinKey(walked, s.key)
		case []any:
			if s.index < 0 {
				return nil, fmt.Errorf("%s: is a list, not a map (key %q)", orRoot(walked), s.key)
			}
			if s.index >= len(c) {
				return nil, fmt.Errorf("%s: index %d out of range (length %d)", orRoot(walked), s.index, len(c))
			}
			cur, walked = c[s.index], fmt.Sprintf("%s[%d]", walked, s.index)
		default:
			return nil, fmt.Errorf("%s: is %T, cannot descend", orRoot(walked), cur)
		}
	}
	return cur, nil
}

// segment is a map key (index -1) or a list index.
type segment struct {
	key   string
	index int
}

// splitPath parses a Field path into segments.
func splitPath(path string) ([]segment, error) {
	var out []segment
	for i := 0; i < len(path); {
		switch path[i] {
		case '.':
			i++
		case '[':
			end := strings.IndexByte(path[i:], ']')
			if end < 0 {
				return nil, fmt.Errorf("path %q: unclosed [", path)
			}
			inner := path[i+1 : i+end]
			if q, err := strconv.Unquote(inner); err == nil {
				out = append(out, segment{key: q, index: -1})
			} else if n, err := strconv.Atoi(inner); err == nil && n >= 0 {
				out = append(out, segment{index: n})
			} else {
				return nil, fmt.Errorf("path %q: [%s] is neither an index nor a quoted key", path, inner)
			}
			i += end + 1
		default:
			end := strings.IndexAny(path[i:], ".[")
			if end < 0 {
				end = len(path) - i
			}
			out = append(out, segment{key: path[i : i+end], index: -1})
			i += end
		}
	}
	return out, nil
}

// joinKey appends key to a walked path.
func joinKey(walked, key string) string {
	if strings.ContainsAny(key, "./[]") {
		return walked + "[" + strconv.Quote(key) + "]"
	}
	if walked == "" {
		return key
	}
	return walked + "." + key
}

// orRoot returns walked, or "(root)" when it is empty.
func orRoot(walked string) string {
	if walked == "" {
		return "(root)"
	}
	return walked
}
