package dashboards

import (
	"bytes"
	"context"
	"encoding/json"
	"errors"
	"fmt"
	"io"
	"net"
	"net/http"
	"net/url"
	"strings"
	"testing"
	"time"

	"kof.dev/kof/internal/testproc"
)

// request sends method to url with body and returns the status code and body.
func request(ctx context.Context, method, url, contentType string, body []byte, user, password string) (int, []byte, error) {
	req, err := http.NewRequestWithContext(ctx, method, url, bytes.NewReader(body))
	if err != nil {
		return 0, nil, err
	}
	if contentType != "" {
		req.Header.Set("Content-Type", contentType)
	}
	if user != "" {
		req.SetBasicAuth(user, password)
	}
	resp, err := http.DefaultClient.Do(req)
	if err != nil {
		return 0, nil, err
	}
	defer resp.Body.Close()
	data, err := io.ReadAll(resp.Body)
	return resp.StatusCode, data, err
}

// result is one series of an instant query result.
type result struct {
	Metric map[string]string `json:"metric"`
	Value  []any             `json:"value"`
}

// query runs an instant query through the Prometheus API of VictoriaMetrics at addr. Errors: transport, a non-200
// answer or status "error" (with VictoriaMetrics' message).
func query(ctx context.Context, addr, q string) ([]result, error) {
	return queryAt(ctx, "http://"+addr, q)
}

// queryAt runs an instant query through the Prometheus API at base (a URL, such as a Grafana data source's), as
// query does.
func queryAt(ctx context.Context, base, q string) ([]result, error) {
	code, body, err := request(ctx, http.MethodGet, base+"/api/v1/query?"+url.Values{"query": {q}}.Encode(), "", nil, "", "")
	if err != nil {
		return nil, err
	}
	var resp struct {
		Status string `json:"status"`
		Error  string `json:"error"`
		Data   struct {
			ResultType string          `json:"resultType"`
			Result     json.RawMessage `json:"result"`
		} `json:"data"`
	}
	if err := json.Unmarshal(body, &resp); err != nil || code != http.StatusOK || resp.Status != "success" {
		return nil, fmt.Errorf("code %d, status %q, error %q %v", code, resp.Status, resp.Error, err)
	}
	if resp.Data.ResultType == "scalar" {
		return []result{{}}, nil
	}
	var out []result
	if err := json.Unmarshal(resp.Data.Result, &out); err != nil {
		return nil, fmt.Errorf("decode %s result: %w", resp.Data.ResultType, err)
	}
	return out, nil
}

// eventually waits for cond to hold (testproc.Eventually), failing the test with its last message after timeout.
func eventually(t *testing.T, timeout time.Duration, what string, cond func(ctx context.Context) (bool, string)) {
	t.Helper()
	testproc.Eventually(t, timeout, what, func(ctx context.Context) error {
		if ok, msg := cond(ctx); !ok {
			return errors.New(msg)
		}
		return nil
	})
}

// hostPort splits a loopback address.
func hostPort(t *testing.T, addr string) (string, string) {
	t.Helper()
	h, p, err := net.SplitHostPort(addr)
	if err != nil {
		t.Fatal(err)
	}
	return h, p
}

// join is strings.Join for lines.
func join(lines []string) string { return strings.Join(lines, "\n") }
