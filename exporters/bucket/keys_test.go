package bucket

import "testing"

func TestEscapeSegment(t *testing.T) {
	for in, want := range map[string]string{
		"default": "default", "a/b c=d": "a%2Fb%20c%3Dd", "team-1_x.y": "team-1_x.y", "é": "%C3%A9", "": "",
	} {
		got := EscapeSegment(in)
		if got != want {
			t.Errorf("EscapeSegment(%q) = %q, want %q; a value must never add a folder level", in, got, want)
		}
		if back, err := UnescapeSegment(got); err != nil || back != in {
			t.Errorf("UnescapeSegment(%q) = %q, %v; want %q", got, back, err, in)
		}
	}
	for _, bad := range []string{"%", "%2", "%zz"} {
		if _, err := UnescapeSegment(bad); err == nil {
			t.Errorf("UnescapeSegment(%q): no error", bad)
		}
	}
}
