// Package victoria reads VictoriaMetrics, VictoriaLogs and VictoriaTraces over HTTP for the KOF exporters: the
// VictoriaMetrics export and label-values APIs, and the LogsQL query and field-values APIs that VictoriaLogs and
// VictoriaTraces share. Every response is streamed line by line and handed to a callback; nothing is held whole.
//
// Sources: https://docs.victoriametrics.com/victoriametrics/single-server-victoriametrics/#how-to-export-data-in-json-line-format,
// https://docs.victoriametrics.com/victorialogs/querying/#http-api, https://docs.victoriametrics.com/victoriatraces/.
package victoria

import (
	"bufio"
	"context"
	"errors"
	"fmt"
	"io"
	"net/http"
	"net/url"
	"strings"
)

// maxLine bounds one JSON line of a response (a VictoriaMetrics export line holds one block of one series, a few
// thousand samples; a log record rarely exceeds a few kilobytes).
const maxLine = 64 << 20

// HTTPError is a response with a status other than 200: the URL (without credentials), the status and the start of
// the body the server sent.
type HTTPError struct {
	// Method is the request method.
	Method string
	// URL is the request URL.
	URL string
	// Status is the HTTP status code.
	Status int
	// Body is the first bytes of the response body.
	Body string
}

// Error returns `<method> <url>: HTTP <status>: <body>`.
func (e *HTTPError) Error() string {
	return fmt.Sprintf("%s %s: HTTP %d: %s", e.Method, e.URL, e.Status, strings.TrimSpace(e.Body))
}

// NewHTTPClient returns the HTTP client the exporters read with: keep-alive connections and no gzip (the servers
// sit beside the exporter in the cluster; compressing the stream there and back costs more CPU than it saves).
func NewHTTPClient() *http.Client {
	tr := http.DefaultTransport.(*http.Transport).Clone()
	tr.DisableCompression = true
	return &http.Client{Transport: tr}
}

// Endpoint is one HTTP API root, such as `http://vmselect-cluster:8481/select/0/prometheus` or
// `http://vlselect-logs:9471`.
type Endpoint struct {
	// Base is the API root URL; request paths are appended to it.
	Base string
	// Username and Password, when Username is set, are sent as basic auth (e.g. a VMUser behind vmauth).
	Username, Password string
	// HTTP is the client used; nil means http.DefaultClient.
	HTTP *http.Client
}

// get sends GET Base+path?query and returns the response body when the status is 200. An unreachable server is an
// error naming the URL; any other status is an *HTTPError.
func (e Endpoint) get(ctx context.Context, path string, query url.Values) (io.ReadCloser, error) {
	u := strings.TrimSuffix(e.Base, "/") + path
	if len(query) > 0 {
		u += "?" + query.Encode()
	}
	return e.do(ctx, http.MethodGet, u, nil)
}

// send POSTs the form body to Base+path and returns the response body when the status is 200.
func (e Endpoint) send(ctx context.Context, path string, form io.Reader) (io.ReadCloser, error) {
	return e.do(ctx, http.MethodPost, strings.TrimSuffix(e.Base, "/")+path, form)
}

func (e Endpoint) do(ctx context.Context, method, u string, form io.Reader) (io.ReadCloser, error) {
	req, err := http.NewRequestWithContext(ctx, method, u, form)
	if err != nil {
		return nil, fmt.Errorf("request %s: %w", u, err)
	}
	if form != nil {
		req.Header.Set("Content-Type", "application/x-www-form-urlencoded")
	}
	if e.Username != "" {
		req.SetBasicAuth(e.Username, e.Password)
	}
	hc := e.HTTP
	if hc == nil {
		hc = http.DefaultClient
	}
	resp, err := hc.Do(req)
	if err != nil {
		var ue *url.Error
		if errors.As(err, &ue) {
			err = ue.Err
		}
		return nil, fmt.Errorf("%s %s: %w", method, u, err)
	}
	if resp.StatusCode != http.StatusOK {
		body, _ := io.ReadAll(io.LimitReader(resp.Body, 512))
		_ = resp.Body.Close()
		return nil, &HTTPError{Method: method, URL: u, Status: resp.StatusCode, Body: string(body)}
	}
	return resp.Body, nil
}

// Lines calls fn with every non-empty line of r (without the newline; the slice is only valid during the call). It
// returns the first error of fn or of reading, or an error when a line is longer than 64 MiB.
func Lines(r io.Reader, fn func(line []byte) error) error {
	br := bufio.NewReaderSize(r, 256<<10)
	var long []byte
	for {
		chunk, err := br.ReadSlice('\n')
		if errors.Is(err, bufio.ErrBufferFull) {
			long = append(long, chunk...)
			if len(long) > maxLine {
				return fmt.Errorf("response line longer than %d bytes", maxLine)
			}
			continue
		}
		if err != nil && !errors.Is(err, io.EOF) {
			// A read that fails mid-line (a connection cut mid-body) ends the stream with its own error; the partial
			// line is never handed on, so the error names the cut and not a JSON error of half a line.
			return fmt.Errorf("read response: %w", err)
		}
		line := chunk
		if len(long) > 0 {
			line = append(long, chunk...)
			long = long[:0]
		}
		if n := len(line); n > 0 && line[n-1] == '\n' {
			line = line[:n-1]
		}
		if len(line) > 0 {
			if ferr := fn(line); ferr != nil {
				return ferr
			}
		}
		if errors.Is(err, io.EOF) {
			return nil
		}
		if err != nil {
			return fmt.Errorf("read response: %w", err)
		}
	}
}
