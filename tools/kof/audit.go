package main

import (
	"errors"
	"fmt"
	"net"
	"os"
	"strings"
	"text/tabwriter"
	"time"

	"github.com/spf13/cobra"

	"kof.dev/kof/exporters/bucket"
	"kof.dev/kof/exporters/evidence"
	"kof.dev/kof/exporters/window"
)

// newAuditCommand returns `kof audit` with `verify`.
func newAuditCommand(s streams) *cobra.Command {
	cmd := &cobra.Command{
		Use:   "audit",
		Short: "Check the audit trail the audit-logs-exporter writes to S3",
		Args:  cobra.NoArgs,
		RunE:  func(cmd *cobra.Command, _ []string) error { return cmd.Help() },
	}
	cmd.AddCommand(newAuditVerifyCommand(s))
	return cmd
}

// auditVerifyFlags are the flags of `kof audit verify`.
type auditVerifyFlags struct {
	endpoint, bucket, region string
	pathStyle, insecure      bool
	stream, tenant, from, to string
	publicKeys, hmacKeys     []string
	delay                    time.Duration
}

// defaultVerifyDelay is how long after an hour ends its window must be in the bucket: the chart's schedule (minute
// 20, after `window.delay` 10m) plus the run's deadline (`activeDeadlineSeconds` 3000 s), charts/audit-logs-exporter.
const defaultVerifyDelay = 70 * time.Minute

// newAuditVerifyCommand returns `kof audit verify`.
func newAuditVerifyCommand(s streams) *cobra.Command {
	var f auditVerifyFlags
	cmd := &cobra.Command{
		Use:   "verify --bucket NAME [--s3-endpoint URL] [--stream S [--tenant T]] [--from TIME] [--to TIME] [--delay D]",
		Short: "Verify every audit window: data sha256 and size, event count, signature, chain, no window missing",
		Long: "Reads the audit objects of the bucket (docs/audit-logs.md) and checks every window: the data object's " +
			"size and sha256 and its number of events against manifest.json, the signature in manifest.json.sig " +
			"with a trusted key, and the chain to the previous window's manifest. Every hour of a stream and tenant " +
			"from its first window up to the last hour closed before now minus --delay must have a window: a " +
			"missing one (a deleted window, or the newest ones: truncation) fails as \"missing window\". " +
			"Trusted keys are the --public-key " +
			"files (and --hmac-key-file secrets) when given, else the public keys published under audit/keys/. " +
			"S3 credentials come from S3_ACCESS_KEY and S3_SECRET_KEY, else the default AWS credential chain. " +
			"Prints one row per window with OK or each failure; exits 1 when any window fails.",
		Args: cobra.NoArgs,
		RunE: func(cmd *cobra.Command, _ []string) error { return runAuditVerify(cmd, s, f) },
	}
	fl := cmd.Flags()
	fl.StringVar(&f.endpoint, "s3-endpoint", "", "S3 endpoint URL (\"\" = AWS S3 of --region)")
	fl.StringVar(&f.bucket, "bucket", "", "bucket holding the audit trail (required)")
	fl.StringVar(&f.region, "region", "", "bucket region (\"\" = us-east-1)")
	fl.BoolVar(&f.pathStyle, "path-style", false, "path-style addressing for any endpoint (without it: virtual-hosted for AWS S3 and Google endpoints, path-style for others such as MinIO)")
	fl.BoolVar(&f.insecure, "insecure-skip-verify", false, "skip TLS verification of the endpoint")
	fl.StringVar(&f.stream, "stream", "", "only this stream (platform-audit-log or tenant-audit-log)")
	fl.StringVar(&f.tenant, "tenant", "", "only this tenant (with --stream)")
	fl.StringVar(&f.from, "from", "", "only windows starting at or after this time (RFC 3339 or YYYY-MM-DDTHH)")
	fl.StringVar(&f.to, "to", "", "only windows starting before this time (RFC 3339 or YYYY-MM-DDTHH)")
	fl.StringArrayVar(&f.publicKeys, "public-key", nil, "trusted Ed25519 public key file (PEM; repeatable)")
	fl.StringArrayVar(&f.hmacKeys, "hmac-key-file", nil, "trusted HMAC-SHA256 key file (repeatable)")
	fl.DurationVar(&f.delay, "delay", defaultVerifyDelay, "how long after an hour ends its window must exist (the exporter's schedule and run time); later hours are not yet missing")
	return cmd
}

func runAuditVerify(cmd *cobra.Command, s streams, f auditVerifyFlags) error {
	if f.bucket == "" {
		return fmt.Errorf("--bucket is required")
	}
	if f.tenant != "" && f.stream == "" {
		return fmt.Errorf("--tenant needs --stream (%s or %s)", evidence.StreamPlatform, evidence.StreamTenant)
	}
	var filter evidence.Filter
	filter.Stream, filter.Tenant = f.stream, f.tenant
	var err error
	if filter.From, err = parseWindowTime("--from", f.from); err != nil {
		return err
	}
	if filter.To, err = parseWindowTime("--to", f.to); err != nil {
		return err
	}
	if f.delay < 0 {
		return fmt.Errorf("--delay %s: must be zero or positive", f.delay)
	}
	filter.Newest = window.Of(time.Now().Add(-f.delay)).Prev().Start
	keys := &evidence.Keys{}
	for _, p := range f.publicKeys {
		data, err := os.ReadFile(p)
		if err != nil {
			return failed(fmt.Errorf("--public-key %s: %w", p, err))
		}
		if _, err := keys.AddPublicKey(data); err != nil {
			return failed(fmt.Errorf("--public-key %s: %w", p, err))
		}
	}
	for _, p := range f.hmacKeys {
		data, err := os.ReadFile(p)
		if err != nil {
			return failed(fmt.Errorf("--hmac-key-file %s: %w", p, err))
		}
		if _, err := keys.AddHMACKey(data); err != nil {
			return failed(fmt.Errorf("--hmac-key-file %s: %w", p, err))
		}
	}
	b, err := bucket.Open(bucket.Config{
		Endpoint: f.endpoint, Region: f.region, Bucket: f.bucket, UsePathStyle: f.pathStyle, InsecureSkipVerify: f.insecure,
		AccessKey: os.Getenv("S3_ACCESS_KEY"), SecretKey: os.Getenv("S3_SECRET_KEY"),
	})
	if err != nil {
		return failed(err)
	}
	rep, err := evidence.Verifier{Bucket: b, Keys: keys}.Verify(cmd.Context(), filter)
	if err != nil {
		var dns *net.DNSError
		if errors.As(err, &dns) && !f.pathStyle {
			return failed(fmt.Errorf("%w; if the store serves no <bucket>.<host> names, pass --path-style", err))
		}
		return failed(err)
	}
	tw := tabwriter.NewWriter(s.out, 0, 4, 2, ' ', 0)
	fmt.Fprintln(tw, "STREAM\tTENANT\tWINDOW\tEVENTS\tRESULT")
	for _, c := range rep.Checks {
		result := "OK"
		if !c.OK() {
			result = "FAIL: " + strings.Join(c.Problems, "; ")
		}
		fmt.Fprintf(tw, "%s\t%s\t%s\t%d\t%s\n", c.Stream, c.Tenant, c.Window, c.Events, result)
	}
	if err := tw.Flush(); err != nil {
		return failed(err)
	}
	fmt.Fprintf(s.out, "%d windows, %d failed\n", len(rep.Checks), rep.Failed())
	if rep.Failed() > 0 {
		return findingsError{n: rep.Failed()}
	}
	if len(rep.Checks) == 0 {
		return failed(fmt.Errorf("no audit window found in %s under %s/", b.URL(), evidence.Root))
	}
	return nil
}

// parseWindowTime reads a --from/--to value: RFC 3339 or `YYYY-MM-DDTHH` (UTC); "" is zero.
func parseWindowTime(flag, v string) (time.Time, error) {
	if v == "" {
		return time.Time{}, nil
	}
	for _, layout := range []string{time.RFC3339Nano, "2006-01-02T15", "2006-01-02T15Z", "2006-01-02"} {
		if t, err := time.Parse(layout, v); err == nil {
			return t.UTC(), nil
		}
	}
	return time.Time{}, fmt.Errorf("%s %q: want RFC 3339 (2026-06-29T17:00:00Z) or YYYY-MM-DDTHH", flag, v)
}
