package bucket

import (
	"fmt"
	"strings"
)

// EscapeSegment escapes v for one segment of an object key: letters, digits and `-_.` stay, every other byte
// becomes `%XX` (as Hive escapes partition values), so a value can never add a folder level. Both exporters name
// their folders with it (coldstorage's tenant and cluster partitions, evidence's tenant folder).
func EscapeSegment(v string) string {
	const hex = "0123456789ABCDEF"
	var b strings.Builder
	for i := 0; i < len(v); i++ {
		c := v[i]
		if c >= 'a' && c <= 'z' || c >= 'A' && c <= 'Z' || c >= '0' && c <= '9' || c == '-' || c == '_' || c == '.' {
			b.WriteByte(c)
			continue
		}
		b.WriteByte('%')
		b.WriteByte(hex[c>>4])
		b.WriteByte(hex[c&15])
	}
	return b.String()
}

// UnescapeSegment reverses EscapeSegment; a `%` not followed by two hexadecimal digits is an error.
func UnescapeSegment(v string) (string, error) {
	var b strings.Builder
	for i := 0; i < len(v); i++ {
		if v[i] != '%' {
			b.WriteByte(v[i])
			continue
		}
		if i+2 >= len(v) {
			return "", fmt.Errorf("bad escape in %q", v)
		}
		var c byte
		if _, err := fmt.Sscanf(v[i+1:i+3], "%02X", &c); err != nil {
			return "", fmt.Errorf("bad escape in %q", v)
		}
		b.WriteByte(c)
		i += 2
	}
	return b.String(), nil
}
