package auditlog

import (
	"encoding/json"
	"testing"

	"kof.dev/kof/exporters/victoria"
)

// FuzzAppendEvent checks that every line is valid JSON equal to what encoding/json writes for the same fields.
func FuzzAppendEvent(f *testing.F) {
	for _, s := range []string{"plain", "quote\" back\\ nl\n tab\t", "\x00\x1f\u2028\u2029", "\xff\xfe bad utf8", "<html>&"} {
		f.Add("k", s)
	}
	f.Fuzz(func(t *testing.T, k, v string) {
		r := &victoria.Record{Fields: []victoria.Label{{Name: "z", Value: v}, {Name: k, Value: "x"}, {Name: "_stream_id", Value: "id"}}}
		line := AppendEvent(nil, r)
		var got map[string]string
		if err := json.Unmarshal(line, &got); err != nil {
			t.Fatalf("invalid JSON %q: %v", line, err)
		}
		want := map[string]string{"z": v, k: "x"}
		if k == "z" {
			want = map[string]string{"z": "x"}
			if r.Fields[0].Name == "z" && r.Fields[1].Name == "z" {
				return // duplicate names: both kept, order decides; nothing to compare
			}
		}
		if k == "_stream_id" {
			delete(want, k)
		}
		for key, val := range want {
			exp, _ := json.Marshal(val)
			var norm string
			_ = json.Unmarshal(exp, &norm)
			if got[key] != norm {
				t.Errorf("field %q = %q, want %q", key, got[key], norm)
			}
		}
	})
}
