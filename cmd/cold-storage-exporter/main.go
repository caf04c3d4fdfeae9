// Command cold-storage-exporter exports the closed UTC hours of metrics, logs and traces of a KOF storage cluster
// as Parquet files on S3 (exporters/coldstorage), configured by environment variables (charts/cold-storage-exporter,
// docs/cold-storage.md). It logs JSON to stderr and exits 1 when any window failed, 2 on a configuration error.
package main

import (
	"context"
	"crypto/rand"
	"encoding/hex"
	"fmt"
	"log/slog"
	"os"
	"os/signal"
	"runtime"
	"runtime/debug"
	"syscall"

	// CA roots for TLS when the image has no CA files (KOF images hold only the binary; docs/release.md).
	_ "golang.org/x/crypto/x509roots/fallback"

	"kof.dev/kof/exporters/coldstorage"
)

// version is set at build time (-ldflags -X main.version=...).
var version = "dev"

func main() {
	os.Exit(run())
}

func run() int {
	if os.Getenv("GOGC") == "" {
		// The live heap is a few row groups and one upload part; collecting at half of it again instead of all of it
		// keeps the resident memory of a large hour close to a small one's for a few percent of CPU.
		debug.SetGCPercent(50)
	}
	if os.Getenv("GOMAXPROCS") == "" {
		// One core: the source spends more CPU per sample formatting its stream than the exporter spends reading and
		// encoding it, so where the two share cores more Ps only add wake-ups and spinning between the exporter's
		// goroutines, and a run takes at most one core from the storage it reads (docs/cold-storage.md).
		runtime.GOMAXPROCS(1)
	}
	log := slog.New(slog.NewJSONHandler(os.Stderr, nil))
	cfg, err := coldstorage.FromEnv(os.Getenv)
	if err != nil {
		log.Error("invalid configuration", "error", err.Error())
		return 2
	}
	ctx, stop := signal.NotifyContext(context.Background(), syscall.SIGTERM, os.Interrupt)
	defer stop()
	e, err := coldstorage.New(cfg, coldstorage.Options{Log: log, Owner: owner(), Version: version})
	if err != nil {
		log.Error("invalid configuration", "error", err.Error())
		return 2
	}
	log.Info("export started", "sources", fmt.Sprint(cfg.Sources), "bucket", cfg.S3.Bucket, "catch_up_hours", cfg.Plan.CatchUp,
		"delay", cfg.Plan.Delay.String(), "gomaxprocs", runtime.GOMAXPROCS(0))
	res := e.Run(ctx)
	// Uploads a signal or a failure left open are aborted here, with their own deadline (ctx may be cancelled).
	if err := e.Close(); err != nil {
		log.Error("abort uploads", "error", err.Error())
	}
	if len(res.Failed) > 0 {
		return 1
	}
	return 0
}

// owner names this run in logs: the host (pod) name and a random suffix.
func owner() string {
	host, _ := os.Hostname()
	b := make([]byte, 4)
	_, _ = rand.Read(b)
	return host + "-" + hex.EncodeToString(b)
}
