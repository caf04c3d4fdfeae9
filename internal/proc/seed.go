package proc

import (
	"crypto/sha256"
	"encoding/hex"
	"encoding/json"
	"errors"
	"fmt"
	"io/fs"
	"os"
	"path/filepath"
	"slices"
	"strings"
	"syscall"
	"time"

	"golang.org/x/sync/errgroup"
	apiextensionsv1 "k8s.io/apiextensions-apiserver/pkg/apis/apiextensions/v1"
	"k8s.io/apimachinery/pkg/runtime"
	"k8s.io/client-go/discovery"
	"k8s.io/client-go/rest"
	"sigs.k8s.io/controller-runtime/pkg/envtest"
)

// seedsFolder is the folder of the etcd seeds (StartEnvtest) in the user's cache folder (SeedsDir).
const seedsFolder = "kof-etcd-seeds"

// MachineDir returns the folder of what the processes of one machine share (the etcd seeds, the port locks): the
// user's cache folder (os.UserCacheDir: $XDG_CACHE_HOME, else ~/.cache), or the system's temporary folder when there
// is none. It does not follow TMPDIR: the test processes move TMPDIR into a scratch folder of their own
// (UseScratch), removed when they end, so what lived there was private to one process.
func MachineDir() string {
	if dir, err := os.UserCacheDir(); err == nil {
		return dir
	}
	return os.TempDir()
}

// SeedsDir returns the folder that holds the etcd seeds of StartEnvtest: `kof-etcd-seeds` of MachineDir (under
// TMPDIR, each test process built a seed of its own instead of one per machine).
func SeedsDir() string { return filepath.Join(MachineDir(), seedsFolder) }

// seedMaxAge is how long a seed nobody used is kept.
const seedMaxAge = 7 * 24 * time.Hour

// crdPollInterval is how often the wait for the CRDs asks discovery when the caller set no interval.
const crdPollInterval = 250 * time.Millisecond

// StartEnvtest starts env (etcd and kube-apiserver from binDir through Envtest's wrappers, their files in dir) with
// the CRDs it asks for (Environment.CRDDirectoryPaths and CRDs, CRDInstallOptions.Paths and CRDs) already stored
// in etcd, and returns the API server's rest.Config once discovery serves every one of them; env.CRDs then lists
// them. Installing CRDs through kube-apiserver costs it far more CPU than everything else a test does with it (about
// 25 s of CPU for KOF's 125 CRDs, against 5 s to start on etcd data that holds them), so each distinct set of CRDs
// (with the etcd and kube-apiserver binaries) is installed once per machine into a seed under
// `<SeedsDir>/<hash>`, and every start copies the seed's etcd data into its own folder. Seeds are
// built under an exclusive flock(2) lock and read under a shared one, so the test processes of one run share them;
// a seed half-built by a killed process is built again, and seeds unused for a week are removed. An env that
// installs webhooks, or no CRDs, is started as env.Start would. Errors: those of Envtest, of reading the CRD files,
// of building or copying the seed (with the seed's control plane logs), of env.Start (the caller stops env), or the
// CRDs not served within CRDInstallOptions.MaxTime (StartTimeout when unset).
func StartEnvtest(env *envtest.Environment, binDir, dir string) (*rest.Config, error) {
	if binDir == "" {
		binDir = os.Getenv("KUBEBUILDER_ASSETS")
	}
	if err := Envtest(env, binDir, dir); err != nil {
		return nil, err
	}
	opts := env.CRDInstallOptions
	opts.Paths = append(slices.Clone(env.CRDDirectoryPaths), opts.Paths...)
	opts.CRDs = append(slices.Clone(env.CRDs), opts.CRDs...)
	opts.ErrorIfPathMissing = opts.ErrorIfPathMissing || env.ErrorIfCRDPathMissing
	w := opts.WebhookOptions
	if len(opts.Paths) == 0 && len(opts.CRDs) == 0 || len(w.MutatingWebhooks)+len(w.ValidatingWebhooks)+len(w.Paths) > 0 {
		return env.Start()
	}
	if err := envtest.ReadCRDFiles(&opts); err != nil {
		return nil, fmt.Errorf("read the CRDs: %w", err)
	}
	if opts.MaxTime == 0 {
		opts.MaxTime = StartTimeout
	}
	if opts.PollInterval == 0 {
		opts.PollInterval = crdPollInterval
	}
	seed, release, err := etcdSeed(binDir, opts)
	if err != nil {
		return nil, err
	}
	err = copyTree(seed, env.ControlPlane.Etcd.DataDir)
	release()
	if err != nil {
		return nil, fmt.Errorf("copy the etcd seed: %w", err)
	}
	env.CRDDirectoryPaths, env.CRDs = nil, nil
	env.CRDInstallOptions.Paths, env.CRDInstallOptions.CRDs = nil, nil
	cfg, err := env.Start()
	if err != nil {
		return cfg, err
	}
	if err := envtest.WaitForCRDs(cfg, opts.CRDs, opts); err != nil {
		return cfg, fmt.Errorf("the %d CRDs of the etcd seed are not served after %s: %w", len(opts.CRDs), opts.MaxTime, err)
	}
	env.CRDs = opts.CRDs
	// kube-apiserver builds the OpenAPI v3 document of a group version on its first request; Helm's first install
	// asks for those of every kind it installs (to learn whether the API server validates fields) with the discovery
	// client's 32 s timeout, which a busy machine can exceed for the large CRD groups. Building them here, within
	// MaxTime, keeps the first Helm install as fast as the next ones.
	if err := warmOpenAPI(cfg, opts.CRDs, opts.PollInterval, opts.MaxTime); err != nil {
		return cfg, err
	}
	return cfg, nil
}

// warmOpenAPI waits until the API server of cfg serves the OpenAPI v3 document of every group version it lists,
// and those of the CRDs' group versions list every served version of every CRD of crds (kube-apiserver adds a CRD
// to its group version's document in the background after it serves the CRD). It asks for the documents four at a
// time, again every poll for a CRD group version that lacks one of them, each request and the whole wait
// within wait. It never asks for the OpenAPI v2 document: no client of the tests or the demo (Helm, Flux, KCM,
// Sveltos, kubectl) reads it, and building it for KOF's 125 CRDs cost kube-apiserver about 6 s of CPU and 400 MiB
// per start. Errors name the group version that was not served or the resources still missing.
func warmOpenAPI(cfg *rest.Config, crds []*apiextensionsv1.CustomResourceDefinition, poll, wait time.Duration) error {
	c := rest.CopyConfig(cfg)
	c.Timeout = wait
	dc, err := discovery.NewDiscoveryClientForConfig(c)
	if err != nil {
		return fmt.Errorf("client for the OpenAPI documents: %w", err)
	}
	// want maps a group version path of the OpenAPI v3 index to the resource paths its document must hold.
	want := map[string][]string{}
	for _, crd := range crds {
		for _, v := range crd.Spec.Versions {
			if v.Served {
				gv := "apis/" + crd.Spec.Group + "/" + v.Name
				want[gv] = append(want[gv], "/"+gv+"/"+crd.Spec.Names.Plural)
			}
		}
	}
	deadline := time.Now().Add(wait)
	complete := map[string]bool{}
	for {
		paths, err := dc.OpenAPIV3().Paths()
		if err != nil {
			return fmt.Errorf("the OpenAPI v3 index is not served within %s: %w", wait, err)
		}
		var todo []string
		for name := range paths {
			if !complete[name] {
				todo = append(todo, name)
			}
		}
		slices.Sort(todo)
		lacking := make([][]string, len(todo))
		var g errgroup.Group
		g.SetLimit(4)
		for i, name := range todo {
			g.Go(func() error {
				b, err := paths[name].Schema(runtime.ContentTypeJSON)
				if err != nil {
					return fmt.Errorf("the OpenAPI v3 document of %s is not served within %s: %w", name, wait, err)
				}
				var doc struct {
					Paths map[string]json.RawMessage `json:"paths"`
				}
				if err := json.Unmarshal(b, &doc); err != nil {
					return fmt.Errorf("the OpenAPI v3 document of %s: %w", name, err)
				}
				for _, p := range want[name] {
					if _, ok := doc.Paths[p]; !ok {
						lacking[i] = append(lacking[i], p)
					}
				}
				return nil
			})
		}
		if err := g.Wait(); err != nil {
			return err
		}
		var missing []string
		for i, name := range todo {
			complete[name] = len(lacking[i]) == 0
			missing = append(missing, lacking[i]...)
		}
		for name := range want {
			if _, ok := paths[name]; !ok {
				missing = append(missing, name)
			}
		}
		if len(missing) == 0 {
			return nil
		}
		if time.Now().After(deadline) {
			slices.Sort(missing)
			return fmt.Errorf("the OpenAPI v3 documents still lack %d CRD resources after %s: %s", len(missing), wait,
				strings.Join(missing, ", "))
		}
		time.Sleep(poll)
	}
}

// etcdSeed returns the etcd data folder of the seed for opts.CRDs and the programs of binDir, building it when
// missing, and the function that releases the shared lock which keeps it in place while the caller copies it.
func etcdSeed(binDir string, opts envtest.CRDInstallOptions) (string, func(), error) {
	key, err := seedKey(binDir, opts.CRDs)
	if err != nil {
		return "", nil, err
	}
	root := SeedsDir()
	if err := os.MkdirAll(root, 0o777); err != nil {
		return "", nil, fmt.Errorf("create the etcd seed folder: %w", err)
	}
	lock, err := os.OpenFile(filepath.Join(root, key+".lock"), os.O_CREATE|os.O_RDWR, 0o666)
	if err != nil {
		return "", nil, fmt.Errorf("open the etcd seed lock: %w", err)
	}
	release := func() { _ = lock.Close() }
	seed, ready := filepath.Join(root, key), filepath.Join(root, key, "ready")
	data := filepath.Join(seed, "data")
	if err := flock(lock, syscall.LOCK_SH); err != nil {
		release()
		return "", nil, err
	}
	now := time.Now()
	if _, err := os.Stat(ready); err == nil {
		_ = os.Chtimes(lock.Name(), now, now)
		return data, release, nil
	}
	if err := flock(lock, syscall.LOCK_EX); err != nil {
		release()
		return "", nil, err
	}
	if _, err := os.Stat(ready); err != nil {
		if err := buildSeed(root, key, binDir, opts); err != nil {
			release()
			return "", nil, err
		}
		pruneSeeds(root, key, now)
	}
	_ = os.Chtimes(lock.Name(), now, now)
	if err := flock(lock, syscall.LOCK_SH); err != nil {
		release()
		return "", nil, err
	}
	return data, release, nil
}

// flock takes lock (blocking) on f.
func flock(f *os.File, how int) error {
	if err := syscall.Flock(int(f.Fd()), how); err != nil {
		return fmt.Errorf("lock %s: %w", f.Name(), err)
	}
	return nil
}

// seedKey hashes what a seed depends on: the etcd and kube-apiserver binaries of binDir (resolved path, size and
// modification time) and every CRD, in name order.
func seedKey(binDir string, crds []*apiextensionsv1.CustomResourceDefinition) (string, error) {
	h := sha256.New()
	for _, name := range []string{"etcd", "kube-apiserver"} {
		p, err := filepath.EvalSymlinks(filepath.Join(binDir, name))
		if err != nil {
			return "", fmt.Errorf("%s: %w; build it with `make tools` (ci/tools/%s.sh)", name, err, name)
		}
		st, err := os.Stat(p)
		if err != nil {
			return "", err
		}
		fmt.Fprintf(h, "%s %d %d\n", p, st.Size(), st.ModTime().UnixNano())
	}
	sorted := slices.Clone(crds)
	slices.SortFunc(sorted, func(a, b *apiextensionsv1.CustomResourceDefinition) int {
		return strings.Compare(a.Name, b.Name)
	})
	for _, c := range sorted {
		b, err := json.Marshal(c)
		if err != nil {
			return "", fmt.Errorf("hash CRD %s: %w", c.Name, err)
		}
		h.Write(b)
		h.Write([]byte{'\n'})
	}
	return hex.EncodeToString(h.Sum(nil))[:24], nil
}

// buildSeed installs opts.CRDs into a control plane of its own started on a fresh etcd data folder, stops it, and
// moves the data to `<root>/<key>/data`, marking it ready last; what a killed build left behind is removed first.
// The caller holds the seed's exclusive lock.
func buildSeed(root, key, binDir string, opts envtest.CRDInstallOptions) error {
	if err := removeSeed(root, key); err != nil {
		return fmt.Errorf("remove a half-built etcd seed: %w", err)
	}
	work, err := os.MkdirTemp(root, key+".build-")
	if err != nil {
		return fmt.Errorf("create the etcd seed's build folder: %w", err)
	}
	defer os.RemoveAll(work)
	crds := make([]*apiextensionsv1.CustomResourceDefinition, len(opts.CRDs))
	for i, c := range opts.CRDs {
		crds[i] = c.DeepCopy()
	}
	env := &envtest.Environment{CRDInstallOptions: envtest.CRDInstallOptions{CRDs: crds, MaxTime: opts.MaxTime,
		PollInterval: opts.PollInterval}}
	env.ControlPlane.Etcd = &envtest.Etcd{DataDir: filepath.Join(work, "data")}
	if err := os.Mkdir(env.ControlPlane.Etcd.DataDir, 0o700); err != nil {
		return err
	}
	if err := Envtest(env, binDir, work); err != nil {
		return err
	}
	if _, err := env.Start(); err != nil {
		_ = env.Stop()
		return fmt.Errorf("build the etcd seed of %d CRDs: %w\n%s", len(crds), err, EnvtestLogs(work, 20))
	}
	if err := env.Stop(); err != nil {
		return fmt.Errorf("stop the etcd seed's control plane: %w", err)
	}
	seed := filepath.Join(root, key)
	if err := os.Mkdir(seed, 0o777); err != nil {
		return fmt.Errorf("create the etcd seed: %w", err)
	}
	if err := os.Rename(env.ControlPlane.Etcd.DataDir, filepath.Join(seed, "data")); err != nil {
		return fmt.Errorf("move the etcd seed in place: %w", err)
	}
	if err := os.WriteFile(filepath.Join(seed, "ready"), nil, 0o666); err != nil {
		return fmt.Errorf("mark the etcd seed ready: %w", err)
	}
	return nil
}

// pruneSeeds removes the seeds other than keep whose lock is free and was last touched before now-seedMaxAge.
func pruneSeeds(root, keep string, now time.Time) {
	locks, _ := filepath.Glob(filepath.Join(root, "*.lock"))
	for _, l := range locks {
		key := strings.TrimSuffix(filepath.Base(l), ".lock")
		st, err := os.Stat(l)
		if key == keep || err != nil || now.Sub(st.ModTime()) < seedMaxAge {
			continue
		}
		f, err := os.OpenFile(l, os.O_RDWR, 0)
		if err != nil {
			continue
		}
		if syscall.Flock(int(f.Fd()), syscall.LOCK_EX|syscall.LOCK_NB) == nil {
			_ = removeSeed(root, key)
			_ = os.Remove(l)
		}
		_ = f.Close()
	}
}

// removeSeed removes the seed key of root and the build folders of its killed builds (not its lock file).
func removeSeed(root, key string) error {
	stale, _ := filepath.Glob(filepath.Join(root, key+".build-*"))
	var errs []error
	for _, s := range append(stale, filepath.Join(root, key)) {
		errs = append(errs, os.RemoveAll(s))
	}
	return errors.Join(errs...)
}

// copyTree copies the files and folders of src into dst (created when missing), keeping their permission bits.
func copyTree(src, dst string) error {
	return filepath.WalkDir(src, func(p string, d fs.DirEntry, err error) error {
		if err != nil {
			return err
		}
		rel, err := filepath.Rel(src, p)
		if err != nil {
			return err
		}
		target := filepath.Join(dst, rel)
		info, err := d.Info()
		if err != nil {
			return err
		}
		if d.IsDir() {
			return os.MkdirAll(target, info.Mode().Perm())
		}
		if !info.Mode().IsRegular() {
			return fmt.Errorf("%s: not a regular file", p)
		}
		return copyFile(p, target, info.Mode().Perm())
	})
}
