package coldstorage_test

import (
	"bufio"
	"bytes"
	"context"
	"encoding/json"
	"errors"
	"fmt"
	"io"
	"math"
	"math/rand/v2"
	"net/http"
	"os/exec"
	"strconv"
	"syscall"
	"testing"
	"time"

	"github.com/minio/minio-go/v7"
	"github.com/minio/minio-go/v7/pkg/credentials"

	"kof.dev/kof/exporters/bucket"
	"kof.dev/kof/exporters/coldstorage"
	"kof.dev/kof/exporters/window"
	"kof.dev/kof/internal/proc"
	"kof.dev/kof/internal/testproc"
)

// bigSeries x bigSamples random values make a samples file of about 8 MB: more than one multipart part
// (bucket.PartSize), so a run can be stopped while its multipart upload is open.
const (
	bigSeries  = 100
	bigSamples = 10_000
)

// checkStoppedMidUpload stops the exporter binary while the multipart upload of a samples file is open, and reruns
// it at once:
//   - SIGTERM: the run aborts its upload on the way out (no incomplete upload is left) and exits 1;
//   - SIGKILL (what an OOMKill is): its upload stays incomplete, for the bucket's lifecycle rule, and is no object,
//     so no `*.parquet` glob reads it;
//
// and each rerun completes the folder: every sample once, the marker, and no other object. The samples live in an
// hour of today, which no other check of the stack exports.
func (s *stack) checkStoppedMidUpload(t *testing.T, b *bucket.Bucket) {
	ctx := context.Background()
	vm, mo := s.vm, s.minio
	root, err := minio.New(mo.Addr, &minio.Options{Creds: credentials.NewStaticV4(testproc.MinIOAccessKey, testproc.MinIOSecretKey, "")})
	if err != nil {
		t.Fatal(err)
	}
	// The hour 2 hours back, exported as the newest closed hour by a WINDOW_DELAY computed at each start.
	h := window.Of(time.Now().Add(-2 * time.Hour))
	sum := ingestRandom(t, vm, h)
	bin := s.binary(t)

	for _, sig := range []syscall.Signal{syscall.SIGTERM, syscall.SIGKILL} {
		t.Run(sig.String(), func(t *testing.T) {
			prefix := "stopped-" + strconv.Itoa(int(sig))
			folder := coldstorage.Folder(prefix, "big", "big", h, coldstorage.Metrics)
			samplesKey := folder + coldstorage.SamplesName
			env := func() []string {
				return []string{
					"SOURCES=metrics", "METRICS_URL=" + vm.URL, "S3_BUCKET=" + testBucket, "S3_ENDPOINT=" + mo.URL,
					"S3_USE_PATH_STYLE=true", "S3_ACCESS_KEY=" + s.access, "S3_SECRET_KEY=" + s.secret,
					"S3_PREFIX=" + prefix, "CATCH_UP_HOURS=1", "SCRATCH_DIR=" + s.scratch,
					"WINDOW_DELAY=" + window.DelayFor(h, time.Now()).String(),
				}
			}
			cmd := exec.Command(bin)
			cmd.Env = env()
			var logs bytes.Buffer
			cmd.Stderr = &logs
			proc.DieWithParent(cmd)
			if err := cmd.Start(); err != nil {
				t.Fatal(err)
			}
			exited := make(chan error, 1)
			go func() { exited <- cmd.Wait() }()
			open := waitUpload(t, root, samplesKey, exited, &logs)
			if err := cmd.Process.Signal(sig); err != nil {
				t.Fatal(err)
			}
			err := <-exited
			var exit *exec.ExitError
			if !errors.As(err, &exit) {
				t.Fatalf("exporter stopped by %s: %v; want a failed exit\n%s", sig, err, logs.String())
			}
			left := uploads(t, root, samplesKey)
			switch sig {
			case syscall.SIGTERM:
				if exit.ExitCode() != 1 || len(left) != 0 {
					t.Errorf("after SIGTERM: exit %d, incomplete uploads %v; want exit 1 and the upload of %s aborted\n%s", exit.ExitCode(), left, open, logs.String())
				}
			default:
				if len(left) != 1 || left[0] != open {
					t.Errorf("after SIGKILL: incomplete uploads %v; want the killed run's upload of %s (the lifecycle rule's)", left, open)
				}
			}
			if got := objects(t, b, prefix+"/"); len(got) != 0 {
				t.Errorf("after %s the bucket holds %v; want no object", sig, got)
			}
			s.checkScratch(t) // the part files have no name in the folder: even SIGKILL leaves none

			again := exec.Command(bin)
			again.Env = env()
			logs.Reset()
			again.Stderr = &logs
			proc.DieWithParent(again)
			if err := again.Run(); err != nil {
				t.Fatalf("immediate rerun: %v\n%s", err, logs.String())
			}
			s.checkScratch(t)
			got := objects(t, b, prefix+"/")
			if len(got) != 3 {
				t.Errorf("after the rerun the bucket holds %v; want %s, %s and %s only", got, coldstorage.SamplesName, coldstorage.SeriesName, coldstorage.SuccessName)
			}
			data, _, err := b.Get(ctx, folder+coldstorage.SamplesName)
			if err != nil {
				t.Fatal(err)
			}
			tb := readParquet(t, data)
			var total float64
			for _, v := range tb.floats("value") {
				total += v
			}
			if tb.rows() != bigSeries*bigSamples || math.Abs(total-sum) > 1e-6*math.Abs(sum) {
				t.Errorf("samples: %d rows, sum %v; want %d rows (each once), sum %v", tb.rows(), total, bigSeries*bigSamples, sum)
			}
			raw, _, err := b.Get(ctx, folder+coldstorage.SuccessName)
			if err != nil {
				t.Fatal(err)
			}
			var m coldstorage.Marker
			if err := json.Unmarshal(raw, &m); err != nil || m.Rows != bigSeries*bigSamples || m.Series != bigSeries {
				t.Errorf("marker rows %d series %d (%v); want %d and %d", m.Rows, m.Series, err, bigSeries*bigSamples, bigSeries)
			}
			if left := uploads(t, root, samplesKey); sig == syscall.SIGTERM && len(left) != 0 || sig == syscall.SIGKILL && len(left) != 1 {
				t.Errorf("after the rerun: incomplete uploads %v; the rerun must leave none of its own", left)
			}
		})
	}
}

// waitUpload waits until a multipart upload of key is open (the exporter is mid-upload) and returns its key;
// it fails t, quoting logs, when the exporter exits first or after a minute.
func waitUpload(t *testing.T, root *minio.Client, key string, exited <-chan error, logs *bytes.Buffer) string {
	t.Helper()
	deadline := time.Now().Add(time.Minute)
	for time.Now().Before(deadline) {
		if open := uploads(t, root, key); len(open) > 0 {
			return open[0]
		}
		select {
		case err := <-exited:
			t.Fatalf("the exporter exited (%v) before it started a multipart upload:\n%s", err, logs.String())
		case <-time.After(10 * time.Millisecond):
		}
	}
	t.Fatalf("no multipart upload started within a minute:\n%s", logs.String())
	return ""
}

// uploads returns the keys of the incomplete multipart uploads of key (with MinIO's root keys: listing them is not
// an action the exporter has; MinIO lists the uploads of one object key, not of a prefix).
func uploads(t *testing.T, root *minio.Client, key string) []string {
	t.Helper()
	var out []string
	for u := range root.ListIncompleteUploads(context.Background(), testBucket, key, false) {
		if u.Err != nil {
			t.Fatal(u.Err)
		}
		out = append(out, u.Key)
	}
	return out
}

// ingestRandom writes bigSeries series of bigSamples random values (which compress poorly) through hour h for
// tenant and cluster `big`, and returns the sum of the values.
func ingestRandom(t *testing.T, vm *testproc.Server, h window.Hour) float64 {
	t.Helper()
	rng := rand.New(rand.NewPCG(1, 2))
	pr, pw := io.Pipe()
	var sum float64
	go func() {
		w := bufio.NewWriterSize(pw, 1<<20)
		step := int64(time.Hour/time.Millisecond) / bigSamples
		for s := 0; s < bigSeries; s++ {
			for i := 0; i < bigSamples; i++ {
				v := rng.Float64() * 1e6
				sum += v
				fmt.Fprintf(w, "big_random{tenant=\"big\",cluster=\"big\",pod=\"pod-%d\"} %s %d\n", s,
					strconv.FormatFloat(v, 'g', -1, 64), h.Start.UnixMilli()+int64(i)*step)
			}
		}
		pw.CloseWithError(w.Flush())
	}()
	resp, err := http.Post(vm.URL+"/api/v1/import/prometheus", "text/plain", pr) //nolint:noctx // loopback
	if err != nil {
		t.Fatal(err)
	}
	_ = resp.Body.Close()
	flush(t, vm)
	return sum
}
