package harness

import (
	"context"
	"errors"
	"fmt"
	"io"
	"os"
	"path/filepath"
	"time"

	"k8s.io/apimachinery/pkg/apis/meta/v1/unstructured"

	"kof.dev/kof/chartlib/fleet"
	"kof.dev/kof/chartlib/validate"
	"kof.dev/kof/internal/proc"
)

// DefaultOperatorWait is how long Demo waits for the kof-operator's objects.
const DefaultOperatorWait = 90 * time.Second

// outMarker marks an output folder Demo wrote, so a later run may replace it as a whole.
const outMarker = ".kof-demo"

// DemoOptions configures Demo.
type DemoOptions struct {
	// Root is the module root (go.mod, charts/, operator/, bin/).
	Root string
	// BinDir holds the programs the demo starts (the `demo` row of ci/tools/targets.tsv); empty means Root/bin.
	BinDir string
	// ScenariosDir holds the scenario folders; Scenario names one of them.
	ScenariosDir, Scenario string
	// OutDir receives `<cluster>/<service>/...` (fleet.Write).
	OutDir string
	// Out receives progress lines and the summary; nil discards them.
	Out io.Writer
	// OperatorWait bounds the wait for the operator's objects; 0 means DefaultOperatorWait.
	OperatorWait time.Duration
	// Hold, when set, is called after the summary with the control plane's kubeconfig path while the control
	// plane, the Flux controllers and the kof-operator still run (so `kof doctor` and `kof ui` can read them);
	// everything is stopped when it returns. Its error fails the run.
	Hold func(kubeconfig string) error
}

// DemoResult is what Demo did.
type DemoResult struct {
	// Installation is the finished (stopped) installation.
	Installation *Installation
	// Fleet is the render with the operator's live objects.
	Fleet *fleet.Fleet
	// Rows are the summary lines, one per cluster.
	Rows []Row
	// KCM is what KCM reported at the summary.
	KCM *KCMReport
	// Elapsed is the wall time of the whole run.
	Elapsed time.Duration
}

// Failed reports whether any cluster has a problem (the run itself still finished).
func (r *DemoResult) Failed() bool {
	for _, row := range r.Rows {
		if len(row.Problems) > 0 {
			return true
		}
	}
	return false
}

// Demo runs the whole flow of `make demo`: control plane and CRDs, KCM's controller manager started beside Flux
// (SessionOptions.KCM), `helm install kof` with the scenario's values, Flux's source-controller and helm-controller
// installing every KOF HelmRelease, the kof-operator, the scenario's clusters, the wait for the operator's objects
// and for KCM's verdicts (Session.KCMReport), the fleet render fed with those live objects, the files under OutDir
// and the summary table with KCM's template and per-cluster service states. KCM must have removed none of the
// umbrella's HelmReleases, at the summary and again after Hold (KCMReleaseCheck): otherwise the run fails. It stops
// everything it started before it returns. A problem of one cluster (a malformed annotation, a missing operator
// object) is reported in the summary and in DemoResult, not as an error; errors are failures of the run itself.
func Demo(ctx context.Context, opts DemoOptions) (*DemoResult, error) {
	start := time.Now()
	out := opts.Out
	if out == nil {
		out = io.Discard
	}
	progress := func(format string, args ...any) {
		fmt.Fprintf(out, "[%5.1fs] %s\n", time.Since(start).Seconds(), fmt.Sprintf(format, args...))
	}
	sc, err := LoadScenario(opts.ScenariosDir, opts.Scenario)
	if err != nil {
		return nil, err
	}
	progress("scenario %s: values %s, clusters %s", sc.Name, sc.ValuesFile, sc.ClustersFile)
	// The output folder is prepared first: the logs go to its logs/ folder from the start, so every log path the
	// run prints still exists after it (the work folder is removed at the end of a run that succeeds).
	if err := prepareOut(opts.OutDir); err != nil {
		return nil, err
	}
	logs := filepath.Join(opts.OutDir, LogsFolder)
	// The work folder is the process's temporary folder while the demo runs (proc.UseScratch), so envtest's own
	// folders land in it too; a folder a killed demo left behind, with everything in it, is removed here.
	work, endScratch, err := proc.UseScratch("demo")
	if work == "" {
		return nil, fmt.Errorf("create work folder: %w", err)
	}
	s, err := StartSession(ctx, SessionOptions{Root: opts.Root, WorkDir: work, LogDir: logs, BinDir: opts.BinDir,
		Progress: progress, KCM: true})
	if err != nil {
		endScratch(1)
		return nil, err
	}
	res, runErr := runDemo(ctx, s, sc, opts, progress)
	if runErr == nil && opts.Hold != nil {
		runErr = opts.Hold(s.ControlPlane.Kubeconfig)
		if runErr == nil { // KCM ran all the while: it must still have removed none of them
			runErr = checkKCMReleases(ctx, s, res, progress)
		}
	}
	var stopErr error
	if res != nil && res.Installation != nil {
		stopErr = res.Installation.Stop() // before the control plane, or the operator fails on a closed API server
	}
	stopErr = errors.Join(stopErr, s.Close())
	if runErr != nil || stopErr != nil {
		endScratch(1)
		return res, errors.Join(runErr, stopErr, fmt.Errorf("kept the work folder %s (kubeconfig) until the next "+
			"run; the Flux and kof-operator logs are in %s", work, logs))
	}
	progress("stopped the kof-operator, KCM, the Flux controllers, kube-apiserver and etcd; their logs are in %s", logs)
	endScratch(0)
	res.Elapsed = time.Since(start)
	return res, nil
}

func runDemo(ctx context.Context, s *Session, sc *Scenario, opts DemoOptions,
	progress func(string, ...any)) (*DemoResult, error) {
	in, err := s.Install(ctx, sc, nil)
	res := &DemoResult{Installation: in}
	if err != nil {
		return res, err
	}
	wait := opts.OperatorWait
	if wait == 0 {
		wait = DefaultOperatorWait
	}
	waited, err := in.WaitOperator(ctx, wait)
	if err != nil {
		return res, err
	}
	found := 0
	for _, e := range waited {
		if e.Found {
			found++
		}
	}
	progress("kof-operator made %d of %d expected objects", found, len(waited))
	kcm, err := s.KCMReport(ctx)
	if err != nil {
		return res, err
	}
	res.KCM = kcm
	progress("KCM judged the templates of %s: %s", KCMNamespace, kcm.TemplateSummary())
	f, ops, err := in.Render(ctx)
	if err != nil {
		return res, err
	}
	res.Fleet, res.Rows = f, Summarize(f, ops, waited)
	for i, c := range f.Clusters {
		key := c.Namespace + "/" + c.Name
		if c.Role == fleet.RoleManagement {
			key = ""
		}
		res.Rows[i].KCM = kcm.Clusters[key]
	}
	progress("fleet render with %d live operator objects: %d clusters", len(ops), len(f.Clusters))
	if err := writeOut(opts.OutDir, f); err != nil {
		return res, err
	}
	fmt.Fprintln(opts.outWriter())
	if err := WriteTable(opts.outWriter(), res.Rows); err != nil {
		return res, err
	}
	fmt.Fprintf(opts.outWriter(), "\nKCM %s: %s\n", KCMVersion, kcm.TemplateSummary())
	// KCM v1.10.0 deleted the umbrella's HelmReleases when they were in its system namespace (docs/sveltos.md):
	// every KOF HelmRelease Flux installed must still be there, and KCM must have recorded no removal.
	if err := checkKCMReleases(ctx, s, res, progress); err != nil {
		return res, err
	}
	fmt.Fprintf(opts.outWriter(), "\nFiles: %s/<cluster>/<service>/{%s,%s,%s}\n", opts.OutDir, fleet.ManifestFile,
		fleet.ValuesFile, fleet.ChartFile)
	return res, nil
}

// checkKCMReleases fails when KCM removed one of the HelmReleases Flux installed for the umbrella (KCMReleaseCheck).
func checkKCMReleases(ctx context.Context, s *Session, res *DemoResult, progress func(string, ...any)) error {
	var kof []string
	for _, r := range res.Installation.Releases {
		kof = append(kof, r.HelmRelease)
	}
	if err := KCMReleaseCheck(ctx, s.ControlPlane.Client, kof); err != nil {
		return fmt.Errorf("KCM removed KOF's HelmReleases: %w", err)
	}
	progress("KCM removed none of KOF's %d HelmReleases (no ComponentRemoved event on its Management)", len(kof))
	return nil
}

func (o DemoOptions) outWriter() io.Writer {
	if o.Out == nil {
		return io.Discard
	}
	return o.Out
}

// Render runs the fleet render with the installation's live state: the umbrella values installed (the scenario's
// and Installation.Values), the live
// `kof` namespace, ClusterTemplates and ClusterDeployments, and the operator's live ConfigMaps and Secrets as
// fleet.Options.ManagementObjects; every object is validated (chartlib/validate). It returns the fleet and the
// operator objects it used; the error is the render's own (per-cluster failures are inside the fleet).
func (in *Installation) Render(ctx context.Context) (*fleet.Fleet, []*unstructured.Unstructured, error) {
	ops, err := in.OperatorObjects(ctx)
	if err != nil {
		return nil, nil, err
	}
	clusters, err := in.LiveClusters(ctx)
	if err != nil {
		return nil, nil, err
	}
	ns, err := in.LiveNamespace(ctx)
	if err != nil {
		return nil, nil, err
	}
	v, err := validate.New()
	if err != nil {
		return nil, nil, fmt.Errorf("validator: %w", err)
	}
	f, err := fleet.Render(ctx, fleet.Options{
		ChartsDir:         in.chartsDir(),
		ValuesFiles:       []string{in.Scenario.ValuesFile},
		Values:            in.Values,
		ReleaseName:       UmbrellaRelease,
		Namespace:         UmbrellaNamespace,
		NamespaceObject:   ns,
		Clusters:          clusters,
		ManagementObjects: ops,
		Validator:         v,
	})
	if err != nil {
		return nil, nil, fmt.Errorf("fleet render: %w", err)
	}
	return f, ops, nil
}

// LogsFolder is the folder of Demo's output folder that keeps the logs of the Flux controllers and the kof-operator
// (source-controller.log, helm-controller.log, kof-operator-<scenario>-<n>.log).
const LogsFolder = "_logs" // a cluster folder never has this name: "_" is not in a DNS-1123 name

// prepareOut empties dir when it is a folder an earlier run wrote (it holds outMarker), creates it and marks it as
// the demo's. A folder of anything else is written into, never removed. Its errors name the folder.
func prepareOut(dir string) error {
	if _, err := os.Stat(filepath.Join(dir, outMarker)); err == nil {
		if err := os.RemoveAll(dir); err != nil {
			return fmt.Errorf("replace %s: %w", dir, err)
		}
	}
	if err := os.MkdirAll(dir, 0o755); err != nil {
		return fmt.Errorf("create %s: %w", dir, err)
	}
	if err := os.WriteFile(filepath.Join(dir, outMarker), []byte("written by kof demo\n"), 0o644); err != nil {
		return fmt.Errorf("write %s: %w", filepath.Join(dir, outMarker), err)
	}
	return nil
}

// writeOut writes the fleet's files into dir, which prepareOut made.
func writeOut(dir string, f *fleet.Fleet) error {
	if err := fleet.Write(dir, f); err != nil {
		return fmt.Errorf("write fleet: %w", err)
	}
	return nil
}
