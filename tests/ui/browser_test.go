package ui

import (
	"context"
	"os/exec"
	"regexp"
	"strings"
	"testing"
	"time"

	"github.com/chromedp/chromedp"
)

// browserWait bounds the whole browser session.
const browserWait = 90 * time.Second

// uiURL matches the URL `kof ui` prints.
var uiURL = regexp.MustCompile(`http://127\.0\.0\.1:[0-9]+/\?token=[0-9a-f]+`)

// browser returns a chromedp context on Debian's chromium with the flags that work as root on a machine without
// network: headless, no sandbox, no GPU, no QUIC, no first-run, background-networking, component-update or sync
// traffic, and a new empty profile.
func browser(t *testing.T) context.Context {
	t.Helper()
	exe, err := exec.LookPath("chromium")
	if err != nil {
		t.Fatalf("chromium not found on PATH: run `bash ci/chromium.sh` (make test does): %v", err)
	}
	opts := []chromedp.ExecAllocatorOption{
		chromedp.ExecPath(exe),
		chromedp.Headless,
		chromedp.NoSandbox,
		chromedp.DisableGPU,
		chromedp.NoFirstRun,
		chromedp.NoDefaultBrowserCheck,
		chromedp.Flag("disable-quic", true),
		chromedp.Flag("disable-background-networking", true),
		chromedp.Flag("disable-component-update", true),
		chromedp.Flag("disable-sync", true),
		chromedp.UserDataDir(t.TempDir()),
		chromedp.WindowSize(1440, 1000),
	}
	ctx, cancel := context.WithTimeout(context.Background(), browserWait)
	t.Cleanup(cancel)
	actx, acancel := chromedp.NewExecAllocator(ctx, opts...)
	t.Cleanup(acancel)
	bctx, bcancel := chromedp.NewContext(actx)
	t.Cleanup(bcancel)
	return bctx
}

// screenshot writes a full-page PNG of the current page to out/ui/<name>.png for docs/ui.md.
func screenshot(t *testing.T, ctx context.Context, name string) {
	t.Helper()
	png, err := chromedp.Run(ctx, chromedp.FullScreenshot(100))
	if err != nil {
		t.Fatalf("screenshot %s: %v", name, err)
	}
	writeOut(t, name+".png", png)
}

// nodes returns the nodes matching sel on the current page, waiting for nothing.
func nodes(t *testing.T, ctx context.Context, sel string) []*chromedp.Node {
	t.Helper()
	ns, err := chromedp.Run(ctx, chromedp.Nodes(chromedp.CSSAll(sel), chromedp.AtLeast(0)))
	if err != nil {
		t.Fatalf("query %s: %v", sel, err)
	}
	return ns
}

// text returns the visible text of the first node matching sel.
func text(t *testing.T, ctx context.Context, sel string) string {
	t.Helper()
	if len(nodes(t, ctx, sel)) == 0 {
		t.Fatalf("no %s on the page", sel)
	}
	s, err := chromedp.Run(ctx, chromedp.Text(chromedp.CSS(sel)))
	if err != nil {
		t.Fatalf("text of %s: %v", sel, err)
	}
	return s
}

// TestBrowserPages drives the UI `kof ui` serves with a real browser: the fleet page lists every cluster and the
// broken child's finding, the child's page its services, then the storage and rules pages; each page is
// screenshotted into out/ui/.
func TestBrowserPages(t *testing.T) {
	url := startServer(t, shared.kof, []string{"ui", "--kubeconfig", shared.session.ControlPlane.Kubeconfig},
		nil, uiURL)
	ctx := browser(t)
	if err := chromedp.Do(ctx, chromedp.Navigate(url), chromedp.WaitVisible(chromedp.CSS("#clusters"))); err != nil {
		t.Fatalf("open %s: %v", url, err)
	}
	location, err := chromedp.Run(ctx, chromedp.Location())
	if err != nil {
		t.Fatal(err)
	}
	if strings.Contains(location, "token=") {
		t.Errorf("after the first visit the URL still carries the token: %s", location)
	}
	for _, c := range []string{"mgmt", "regional-1", "child-1", "child-2", "child-3"} {
		if len(nodes(t, ctx, `#clusters tr[data-cluster="`+c+`"]`)) != 1 {
			t.Errorf("fleet page lists no row for cluster %s", c)
		}
	}
	state := text(t, ctx, `#clusters tr[data-cluster="child-3"] .badge`)
	if state != "error" {
		t.Errorf("child-3 state %q, want error", state)
	}
	finding := text(t, ctx, `li.finding[data-code="NoRegional"][data-cluster="child-3"]`)
	for _, want := range []string{"no regional", "k0rdent.mirantis.com/kof-regional-cluster-name", "aws region"} {
		if !strings.Contains(finding, want) {
			t.Errorf("child-3's finding lacks %q:\n%s", want, finding)
		}
	}
	for _, c := range []string{"child-1", "child-2", "regional-1", "mgmt"} {
		if n := len(nodes(t, ctx, `li.finding.error[data-cluster="`+c+`"]`)); n > 0 {
			t.Errorf("healthy cluster %s shows %d error findings", c, n)
		}
	}
	screenshot(t, ctx, "fleet")

	if err := chromedp.Do(ctx, chromedp.Click(chromedp.CSS(`#clusters tr[data-cluster="child-3"] a`)),
		chromedp.WaitVisible(chromedp.CSS("#services"))); err != nil {
		t.Fatalf("open child-3: %v", err)
	}
	if len(nodes(t, ctx, `#services tr[data-service="kof-collectors"]`)) != 1 {
		t.Error("child-3's page shows no kof-collectors service")
	}
	if len(nodes(t, ctx, `#selections tr[data-mcs="kof-child-cluster"]`)) != 1 {
		t.Error("child-3's page does not show the MultiClusterService that selects it")
	}
	if got := text(t, ctx, `#selections tr[data-mcs="kof-regional-cluster"]`); !strings.Contains(got, `is "child"`) {
		t.Errorf("kof-regional-cluster row does not say which term fails: %q", got)
	}
	screenshot(t, ctx, "cluster")

	if err := chromedp.Do(ctx, chromedp.Navigate(strings.Split(url, "?")[0]+"clusters/kcm-system/regional-1"),
		chromedp.WaitVisible(chromedp.CSS("#objects"))); err != nil {
		t.Fatalf("open regional-1: %v", err)
	}
	screenshot(t, ctx, "regional")

	if err := chromedp.Do(ctx, chromedp.Click(chromedp.CSS(`nav a[href="/storage"]`)),
		chromedp.WaitVisible(chromedp.CSS("#promxyservergroups"))); err != nil {
		t.Fatalf("open storage: %v", err)
	}
	if n := len(nodes(t, ctx, "#promxyservergroups tbody tr")); n != 2 {
		t.Errorf("storage page lists %d PromxyServerGroups, want regional-1's and the mothership's", n)
	}
	if n := len(nodes(t, ctx, "#connections tbody tr")); n != 3 {
		t.Errorf("storage page lists %d VMStorageConnections, want regional-1's three", n)
	}
	screenshot(t, ctx, "storage")

	if err := chromedp.Do(ctx, chromedp.Click(chromedp.CSS(`nav a[href="/rules"]`)),
		chromedp.WaitVisible(chromedp.CSS("main"))); err != nil {
		t.Fatalf("open rules: %v", err)
	}
	if len(nodes(t, ctx, `.ruleset[data-cluster="regional-1"] details`)) == 0 {
		t.Error("rules page shows no rule group of regional-1")
	}
	if len(nodes(t, ctx, `.ruleset[data-cluster=""] details`)) == 0 {
		t.Error("rules page shows no default alerting group of the promxy rules ConfigMap")
	}
	if err := chromedp.Do(ctx, chromedp.Click(chromedp.CSS(`.ruleset[data-cluster="regional-1"] summary`)),
		chromedp.WaitVisible(chromedp.CSS(`.ruleset[data-cluster="regional-1"] details[open] td`))); err != nil {
		t.Fatalf("open regional-1's first rule group: %v", err)
	}
	screenshot(t, ctx, "rules")
}
