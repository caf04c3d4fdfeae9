// Package charts holds KOF's Helm charts, one folder each, and embeds them in the Go programs that import it, so
// that `kof render` renders the charts it was built with from any folder (go:embed; every file of every `kof*`
// and exporter chart folder, dotfiles and `_` files included, as Helm's directory loader reads them).
package charts

import (
	"embed"
	"io/fs"
)

// embedded is every chart folder; an embed.FS cannot be written.
//
//go:embed all:kof all:kof-* all:cold-storage-exporter all:audit-logs-exporter
var embedded embed.FS

// FS returns the embedded charts: folder `<chart>/` per chart (e.g. `kof/Chart.yaml`, `kof-storage/templates/`),
// read-only. Load one with chartlib/render.LoadFS(charts.FS(), "<chart>").
func FS() fs.FS { return embedded }
