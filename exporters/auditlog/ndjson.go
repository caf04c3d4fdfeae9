package auditlog

import (
	"sort"
	"unicode/utf8"

	"kof.dev/kof/exporters/victoria"
)

// fieldStreamID is LogsQL's internal stream id: not part of the event.
const fieldStreamID = "_stream_id"

// AppendEvent appends the canonical JSON line of one audit record: an object of every field but `_stream_id`,
// keys sorted, string values, no insignificant white space, escaped as encoding/json escapes without HTML
// escaping, followed by a newline. The same record always gives the same bytes.
func AppendEvent(dst []byte, r *victoria.Record) []byte {
	fields := r.Fields
	if !sort.SliceIsSorted(fields, func(i, j int) bool { return fields[i].Name < fields[j].Name }) {
		sort.SliceStable(fields, func(i, j int) bool { return fields[i].Name < fields[j].Name })
	}
	dst = append(dst, '{')
	first := true
	for _, f := range fields {
		if f.Name == fieldStreamID {
			continue
		}
		if !first {
			dst = append(dst, ',')
		}
		first = false
		dst = appendString(dst, f.Name)
		dst = append(dst, ':')
		dst = appendString(dst, f.Value)
	}
	return append(dst, '}', '\n')
}

// appendString appends s as a JSON string the way encoding/json writes it with HTML escaping off.
func appendString(dst []byte, s string) []byte {
	const hex = "0123456789abcdef"
	dst = append(dst, '"')
	start := 0
	for i := 0; i < len(s); {
		if b := s[i]; b < utf8.RuneSelf {
			if b >= 0x20 && b != '"' && b != '\\' {
				i++
				continue
			}
			dst = append(dst, s[start:i]...)
			switch b {
			case '"', '\\':
				dst = append(dst, '\\', b)
			case '\n':
				dst = append(dst, '\\', 'n')
			case '\r':
				dst = append(dst, '\\', 'r')
			case '\t':
				dst = append(dst, '\\', 't')
			case '\b':
				dst = append(dst, '\\', 'b')
			case '\f':
				dst = append(dst, '\\', 'f')
			default:
				dst = append(dst, '\\', 'u', '0', '0', hex[b>>4], hex[b&0xF])
			}
			i++
			start = i
			continue
		}
		c, size := utf8.DecodeRuneInString(s[i:])
		if c == utf8.RuneError && size == 1 {
			dst = append(dst, s[start:i]...)
			dst = append(dst, `\ufffd`...)
			i += size
			start = i
			continue
		}
		if c == '\u2028' || c == '\u2029' {
			dst = append(dst, s[start:i]...)
			dst = append(dst, '\\', 'u', '2', '0', '2', hex[c&0xF])
			i += size
			start = i
			continue
		}
		i += size
	}
	dst = append(dst, s[start:]...)
	return append(dst, '"')
}
