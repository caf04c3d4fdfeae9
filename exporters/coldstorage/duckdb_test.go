package coldstorage_test

import (
	"context"
	"database/sql"
	"os"
	"path/filepath"
	"regexp"
	"strings"
	"testing"

	_ "github.com/duckdb/duckdb-go/v2" // the "duckdb" database/sql driver: DuckDB's own engine, linked in

	"github.com/google/go-cmp/cmp"

	"kof.dev/kof/exporters/bucket"
	"kof.dev/kof/exporters/coldstorage"
)

// duckdbBlock matches the SQL blocks of docs/cold-storage.md that start with `-- DuckDB: <kind>`.
var duckdbBlock = regexp.MustCompile("(?s)```sql\n-- DuckDB: (view|query)\n(.*?)```")

// docBlocks returns the DuckDB view and queries of docs/cold-storage.md, in order, with the bucket URL
// `s3://kof-cold/` replaced by dir (the exported objects copied there under their keys).
func docBlocks(t *testing.T, dir string) (views, queries []string) {
	t.Helper()
	doc, err := os.ReadFile(filepath.Join("..", "..", "docs", "cold-storage.md"))
	if err != nil {
		t.Fatal(err)
	}
	for _, m := range duckdbBlock.FindAllStringSubmatch(string(doc), -1) {
		q := strings.ReplaceAll(m[2], "s3://kof-cold/", dir+"/")
		if m[1] == "view" {
			views = append(views, q)
		} else {
			queries = append(queries, q)
		}
	}
	if len(views) != 1 || len(queries) != 2 {
		t.Fatalf("docs/cold-storage.md has %d DuckDB views and %d queries; the test expects 1 and 2", len(views), len(queries))
	}
	return views, queries
}

// checkDuckDB copies every object under prefix to a local folder, runs the documented DuckDB view and queries on
// real DuckDB over the files and compares their results with the ingested counts and sums.
func (s *stack) checkDuckDB(t *testing.T, b *bucket.Bucket, prefix string) {
	ctx := context.Background()
	dir := filepath.Join(t.TempDir(), "kof-cold")
	for key := range objects(t, b, prefix+"/") {
		data, _, err := b.Get(ctx, key)
		if err != nil {
			t.Fatal(err)
		}
		path := filepath.Join(dir, filepath.FromSlash(key))
		if err := os.MkdirAll(filepath.Dir(path), 0o755); err != nil {
			t.Fatal(err)
		}
		if err := os.WriteFile(path, data, 0o644); err != nil {
			t.Fatal(err)
		}
	}
	views, queries := docBlocks(t, dir)
	db, err := sql.Open("duckdb", "")
	if err != nil {
		t.Fatal(err)
	}
	defer db.Close()
	if _, err := db.ExecContext(ctx, views[0]); err != nil {
		t.Fatalf("documented view: %v\n%s", err, views[0])
	}

	type perCluster struct {
		Cluster, Metric string
		Samples         int64
		Total           float64
		Jobs            int64
	}
	var want []perCluster
	for _, c := range clusters { // ORDER BY ALL: clusters are sorted
		row := perCluster{Cluster: c, Metric: "up", Jobs: 2}
		for k, n := range s.want {
			if k.source == coldstorage.Metrics && k.tenant == "acme" && k.cluster == c {
				row.Samples += int64(n)
				row.Total += s.sums[k]
			}
		}
		want = append(want, row)
	}
	var got []perCluster
	rows, err := db.QueryContext(ctx, queries[0])
	if err != nil {
		t.Fatalf("documented query: %v\n%s", err, queries[0])
	}
	for rows.Next() {
		var r perCluster
		if err := rows.Scan(&r.Cluster, &r.Metric, &r.Samples, &r.Total, &r.Jobs); err != nil {
			t.Fatal(err)
		}
		got = append(got, r)
	}
	if err := rows.Err(); err != nil {
		t.Fatal(err)
	}
	if d := cmp.Diff(want, got); d != "" {
		t.Errorf("documented view query (-ingested +DuckDB):\n%s", d)
	}

	type perJob struct {
		Job     string
		Samples int64
		Total   float64
	}
	var half perJob
	for k, n := range s.want {
		if k.source == coldstorage.Metrics && k.tenant == "acme" && k.cluster == "child" {
			half.Samples += int64(n) / 2 // two series per folder, kubelet and node, with the same samples
			half.Total += s.sums[k] / 2
		}
	}
	wantJobs := []perJob{{"kubelet", half.Samples, half.Total}, {"node", half.Samples, half.Total}}
	var gotJobs []perJob
	rows, err = db.QueryContext(ctx, queries[1])
	if err != nil {
		t.Fatalf("documented query: %v\n%s", err, queries[1])
	}
	for rows.Next() {
		var r perJob
		if err := rows.Scan(&r.Job, &r.Samples, &r.Total); err != nil {
			t.Fatal(err)
		}
		gotJobs = append(gotJobs, r)
	}
	if err := rows.Err(); err != nil {
		t.Fatal(err)
	}
	if d := cmp.Diff(wantJobs, gotJobs); d != "" {
		t.Errorf("documented join query (-ingested +DuckDB):\n%s", d)
	}
}
