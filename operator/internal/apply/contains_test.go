package apply

import "testing"

func TestContains(t *testing.T) {
	tests := []struct {
		name       string
		have, want any
		ok         bool
	}{
		{"equal scalars", "a", "a", true},
		{"different scalars", "a", "b", false},
		{"extra keys in live object are ignored", map[string]any{"a": "1", "b": "2"}, map[string]any{"a": "1"}, true},
		{"missing key", map[string]any{"b": "2"}, map[string]any{"a": "1"}, false},
		{"absent equals zero", map[string]any{}, map[string]any{"a": "", "n": int64(0), "f": false}, true},
		{"nested difference", map[string]any{"s": map[string]any{"x": int64(1)}}, map[string]any{"s": map[string]any{"x": int64(2)}}, false},
		{"list length differs", []any{"a", "b"}, []any{"a"}, false},
		{"list elements are subsets", []any{map[string]any{"a": "1", "d": "x"}}, []any{map[string]any{"a": "1"}}, true},
		{"list order matters", []any{"a", "b"}, []any{"b", "a"}, false},
		{"nil want", "anything", nil, true},
		{"map vs scalar", "a", map[string]any{"a": "1"}, false},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			if got := Contains(tt.have, tt.want); got != tt.ok {
				t.Errorf("Contains(%v, %v) = %v, want %v", tt.have, tt.want, got, tt.ok)
			}
		})
	}
}
