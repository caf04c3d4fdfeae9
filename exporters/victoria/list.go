package victoria

import (
	"encoding/json"
	"fmt"
	"io"
	"sort"
)

// decodeStringList decodes a Prometheus-style response `{"status":"success","<key>":[...]}` and returns the list,
// sorted.
func decodeStringList(r io.Reader, key string) ([]string, error) {
	var resp map[string]json.RawMessage
	if err := json.NewDecoder(r).Decode(&resp); err != nil {
		return nil, fmt.Errorf("decode response: %w", err)
	}
	var out []string
	if raw, ok := resp[key]; ok {
		if err := json.Unmarshal(raw, &out); err != nil {
			return nil, fmt.Errorf("decode %q: %w", key, err)
		}
	}
	sort.Strings(out)
	return out, nil
}
