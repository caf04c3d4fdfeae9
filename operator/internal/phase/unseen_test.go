package phase

import "testing"

// Unseen gives the written value only while the cache holds an older resource version, and drops the entry once
// the cache holds the written version or a newer one, or either version does not parse.
func TestUnseen(t *testing.T) {
	for _, c := range []struct {
		name, written, cached string
		want                  bool
		kept                  bool
	}{
		{"cache older", "10", "9", true, true},
		{"cache holds the write", "10", "10", false, false},
		{"cache newer", "10", "11", false, false},
		{"cached version unparsable", "10", "x", false, false},
		{"written version unparsable", "x", "9", false, false},
	} {
		var u Unseen[string, int]
		u.Record("a", c.written, 7)
		v, ok := u.Newer("a", c.cached)
		if ok != c.want || (ok && v != 7) {
			t.Errorf("%s: Newer = %d, %v; want %v", c.name, v, ok, c.want)
		}
		if _, kept := u.m["a"]; kept != c.kept {
			t.Errorf("%s: entry kept = %v, want %v", c.name, kept, c.kept)
		}
	}
	var u Unseen[string, int]
	u.Record("a", "10", 7)
	if _, ok := u.Newer("b", "9"); ok {
		t.Error("a key never written has a value")
	}
}
