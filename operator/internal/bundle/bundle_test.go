package bundle

import (
	"strings"
	"testing"
)

func TestPassword(t *testing.T) {
	seen := map[string]bool{}
	for range 100 {
		p, err := Password()
		if err != nil {
			t.Fatal(err)
		}
		if len(p) < 16 || strings.Trim(p, passwordChars) != "" {
			t.Fatalf("password %q: want >= 16 alphanumerics", p)
		}
		seen[p] = true
	}
	if len(seen) != 100 {
		t.Errorf("%d distinct passwords of 100", len(seen))
	}
}
