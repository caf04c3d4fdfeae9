// Command audit-logs-exporter exports the closed UTC hours of Kubernetes audit events from the audit VictoriaLogs
// cluster to S3 as gzip NDJSON with signed, chained manifests (exporters/auditlog), configured by environment
// variables and a mounted signing key (charts/audit-logs-exporter, docs/audit-logs.md). It logs JSON to stderr and
// exits 1 when any window failed (or compliance mode refused a bucket without object lock, or one whose object
// lock configuration its S3 user may not read), 2 on a configuration error.
package main

import (
	"context"
	"log/slog"
	"os"
	"os/signal"
	"syscall"

	// CA roots for TLS when the image has no CA files (KOF images hold only the binary; docs/release.md).
	_ "golang.org/x/crypto/x509roots/fallback"

	"kof.dev/kof/exporters/auditlog"
)

// version is set at build time (-ldflags -X main.version=...).
var version = "dev"

func main() {
	os.Exit(run())
}

func run() int {
	log := slog.New(slog.NewJSONHandler(os.Stderr, nil))
	cfg, err := auditlog.FromEnv(os.Getenv, os.ReadFile)
	if err != nil {
		log.Error("invalid configuration", "error", err.Error())
		return 2
	}
	e, err := auditlog.New(cfg, auditlog.Options{Log: log, Version: version})
	if err != nil {
		log.Error("invalid configuration", "error", err.Error())
		return 2
	}
	ctx, stop := signal.NotifyContext(context.Background(), syscall.SIGTERM, os.Interrupt)
	defer stop()
	log.Info("export started", "bucket", cfg.S3.Bucket, "key_id", cfg.Signer.KeyID(), "algorithm", cfg.Signer.Algorithm(),
		"compliance_mode", cfg.ComplianceMode, "catch_up_hours", cfg.Plan.CatchUp)
	if res := e.Run(ctx); len(res.Failed) > 0 {
		return 1
	}
	return 0
}
