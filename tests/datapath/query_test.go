package datapath

import (
	"bufio"
	"bytes"
	"context"
	"encoding/json"
	"fmt"
	"net/url"
)

// series returns the label sets of the series VictoriaMetrics at addr holds for the selector match.
func series(ctx context.Context, addr, match string) ([]map[string]string, error) {
	body, code, err := get(ctx, "http://"+addr+"/api/v1/series?"+url.Values{"match[]": {match}}.Encode())
	if err != nil || code != 200 {
		return nil, fmt.Errorf("series %s: code %d, err %v, body %.200s", match, code, err, body)
	}
	var resp struct {
		Data []map[string]string `json:"data"`
	}
	if err := json.Unmarshal(body, &resp); err != nil {
		return nil, fmt.Errorf("series %s: %w", match, err)
	}
	return resp.Data, nil
}

// logs returns the records VictoriaLogs at addr returns for the LogsQL query.
func logs(ctx context.Context, addr, query string) ([]map[string]string, error) {
	body, code, err := get(ctx, "http://"+addr+"/select/logsql/query?"+url.Values{"query": {query}}.Encode())
	if err != nil || code != 200 {
		return nil, fmt.Errorf("logsql %s: code %d, err %v, body %.200s", query, code, err, body)
	}
	var out []map[string]string
	sc := bufio.NewScanner(bytes.NewReader(body))
	sc.Buffer(make([]byte, 1<<20), 1<<20)
	for sc.Scan() {
		var rec map[string]string
		if err := json.Unmarshal(sc.Bytes(), &rec); err != nil {
			return nil, fmt.Errorf("logsql %s: %w", query, err)
		}
		out = append(out, rec)
	}
	return out, sc.Err()
}

// splitLines splits text into lines.
func splitLines(text string) []string {
	var out []string
	sc := bufio.NewScanner(bytes.NewReader([]byte(text)))
	sc.Buffer(make([]byte, 1<<20), 1<<20)
	for sc.Scan() {
		out = append(out, sc.Text())
	}
	return out
}

// endsWithZero reports whether a metric line's value is 0.
func endsWithZero(line string) bool {
	f := bytes.Fields([]byte(line))
	return len(f) > 0 && (string(f[len(f)-1]) == "0" || string(f[len(f)-1]) == "0.0")
}
