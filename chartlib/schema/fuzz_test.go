package schema

import (
	"encoding/json"
	"testing"
)

// FuzzGenerate checks that any values document either fails with an error or yields valid JSON.
func FuzzGenerate(f *testing.F) {
	f.Add([]byte("# -- Port.\nport: 80\n"))
	f.Add([]byte("# @schema passthrough\na: {b: [1, 2]}\n"))
	f.Add([]byte("# @schema items: {type: string,\n# @schema   enum: [a]}\nl: [a]\n"))
	f.Add([]byte("a: &x {b: 1}\nc: *x\n"))
	f.Fuzz(func(t *testing.T, data []byte) {
		out, err := Generate(data)
		if err != nil {
			return
		}
		var v map[string]any
		if err := json.Unmarshal(out, &v); err != nil {
			t.Fatalf("generated schema is not JSON: %v\n%s", err, out)
		}
		if v["$schema"] != Draft07 {
			t.Fatalf("$schema = %v", v["$schema"])
		}
	})
}
