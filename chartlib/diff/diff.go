package diff

import (
	"fmt"
	"reflect"
	"slices"
	"sort"
	"strings"

	"k8s.io/apimachinery/pkg/apis/meta/v1/unstructured"

	"kof.dev/kof/chartlib/fleet"
	"kof.dev/kof/chartlib/manifest"
)

// Status says how a cluster, release or object differs between the two fleets.
type Status string

// The statuses of Cluster, Release and Object.
const (
	Unchanged Status = "unchanged"
	Added     Status = "added"
	Removed   Status = "removed"
	Changed   Status = "changed"
	// Moved marks an object that the other fleet renders in another release of the same cluster.
	Moved Status = "moved"
)

// Exit codes of `kof diff` (Report.ExitCode), so that CI can gate on them.
const (
	ExitNoChange = 0
	ExitChanges  = 1
	ExitHurts    = 2
)

// Report is what changes from the old fleet to the new one.
type Report struct {
	// Clusters are the clusters of both fleets, the management cluster first, then by namespace and name; Unchanged
	// ones carry no releases.
	Clusters []Cluster `json:"clusters"`
	// Summary counts the changes.
	Summary Summary `json:"summary"`
}

// Summary counts clusters and objects by status, and the changes that hurt.
type Summary struct {
	Clusters         int `json:"clusters"`
	ChangedClusters  int `json:"changedClusters"`
	ObjectsAdded     int `json:"objectsAdded"`
	ObjectsRemoved   int `json:"objectsRemoved"`
	ObjectsChanged   int `json:"objectsChanged"`
	ReleasesAdded    int `json:"releasesAdded"`
	ReleasesRemoved  int `json:"releasesRemoved"`
	ReleasesChanged  int `json:"releasesChanged"`
	ObjectsUnchanged int `json:"objectsUnchanged"`
	ChangesThatHurt  int `json:"changesThatHurt"`
}

// Cluster is what changes on one cluster.
type Cluster struct {
	// Name, Namespace and Dir identify the cluster as fleet.Cluster does (mgmt/mgmt for the management cluster).
	Name      string `json:"name"`
	Namespace string `json:"namespace"`
	Dir       string `json:"dir"`
	Role      string `json:"role"`
	Status    Status `json:"status"`
	// Problems are the cluster's problems in the new fleet that the old one did not have (fleet.Cluster.Problems:
	// errors, failed services and check findings); each also hurts.
	Problems []string `json:"problems,omitempty"`
	// Hurts are the cluster-level changes that hurt (a new problem).
	Hurts []Hurt `json:"hurts,omitempty"`
	// Releases are the releases that differ, in the new fleet's delivery order, removed ones after.
	Releases []Release `json:"releases,omitempty"`
	// unchanged counts the objects that do not change.
	unchanged int
}

// Release is what changes in one Helm release (or the operator's outputs, or a resources service) of a cluster.
type Release struct {
	// Name and Namespace of the release; Via says what delivers it in the new fleet (the old one when removed).
	Name      string `json:"name"`
	Namespace string `json:"namespace"`
	Via       string `json:"via"`
	Status    Status `json:"status"`
	// Fields are the changes of the release itself: via, chart, version, repository.
	Fields []Field `json:"fields,omitempty"`
	// Values are the changes of the release's final values (layer-2 values instantiated for the cluster, valuesFrom
	// merged).
	Values []Field `json:"values,omitempty"`
	// Objects are the objects added, removed, moved or changed, by kind, namespace and name.
	Objects []Object `json:"objects,omitempty"`
	// Hurts are the release-level changes that hurt (it moves to another owner, it no longer renders).
	Hurts []Hurt `json:"hurts,omitempty"`
}

// Object is one object that differs.
type Object struct {
	// Key names the object: `Kind[.group] namespace/name` (manifest.Key).
	Key    string `json:"key"`
	Status Status `json:"status"`
	// MovedTo names the release (`namespace/name`) that renders the object in the new fleet when Status is Moved.
	MovedTo string `json:"movedTo,omitempty"`
	// Fields are the field-level changes (Changed and Moved).
	Fields []Field `json:"fields,omitempty"`
	// Hurts are the changes of this object that hurt, each with its reason.
	Hurts []Hurt `json:"hurts,omitempty"`
}

// Hurts returns every change of the report that hurts, with the cluster, release and object it concerns.
func (r *Report) Hurts() []Located {
	var out []Located
	for _, c := range r.Clusters {
		for _, h := range c.Hurts {
			out = append(out, Located{Cluster: c.Dir, Hurt: h})
		}
		for _, rel := range c.Releases {
			id := rel.Namespace + "/" + rel.Name
			for _, h := range rel.Hurts {
				out = append(out, Located{Cluster: c.Dir, Release: id, Hurt: h})
			}
			for _, o := range rel.Objects {
				for _, h := range o.Hurts {
					out = append(out, Located{Cluster: c.Dir, Release: id, Object: o.Key, Hurt: h})
				}
			}
		}
	}
	return out
}

// Located is a Hurt with where it is.
type Located struct {
	Cluster string `json:"cluster"`
	Release string `json:"release,omitempty"`
	Object  string `json:"object,omitempty"`
	Hurt
}

// ExitCode returns ExitNoChange when nothing changes, ExitHurts when a change hurts, ExitChanges otherwise.
func (r *Report) ExitCode() int {
	switch {
	case r.Summary.ChangesThatHurt > 0:
		return ExitHurts
	case r.Summary.ChangedClusters > 0:
		return ExitChanges
	default:
		return ExitNoChange
	}
}

// Fleets compares two renders of the same fleet (same ClusterDeployments; other charts or values) and returns what
// changes per cluster, release and object, with the changes that hurt classified (docs/upgrade.md, "What kof diff
// flags"). The CRDs of each local chart's `crds/` folder are compared as objects of the release that installs the
// chart. It returns an error only when a chart's CRDs cannot be read.
func Fleets(old, new *fleet.Fleet) (*Report, error) {
	r := &Report{}
	oldClusters := map[string]*fleet.Cluster{}
	for _, c := range old.Clusters {
		oldClusters[clusterID(c)] = c
	}
	seen := map[string]bool{}
	for _, nc := range new.Clusters {
		id := clusterID(nc)
		seen[id] = true
		c, err := compareCluster(old, new, oldClusters[id], nc)
		if err != nil {
			return nil, err
		}
		r.Clusters = append(r.Clusters, c)
	}
	for _, oc := range old.Clusters {
		if !seen[clusterID(oc)] {
			c, err := compareCluster(old, new, oc, nil)
			if err != nil {
				return nil, err
			}
			r.Clusters = append(r.Clusters, c)
		}
	}
	r.count()
	return r, nil
}

// count fills r.Summary.
func (r *Report) count() {
	s := Summary{Clusters: len(r.Clusters)}
	for _, c := range r.Clusters {
		if c.Status != Unchanged {
			s.ChangedClusters++
		}
		s.ChangesThatHurt += len(c.Hurts)
		s.ObjectsUnchanged += c.unchanged
		for _, rel := range c.Releases {
			switch rel.Status {
			case Added:
				s.ReleasesAdded++
			case Removed:
				s.ReleasesRemoved++
			case Changed:
				s.ReleasesChanged++
			}
			s.ChangesThatHurt += len(rel.Hurts)
			for _, o := range rel.Objects {
				switch o.Status {
				case Added:
					s.ObjectsAdded++
				case Removed:
					s.ObjectsRemoved++
				default:
					s.ObjectsChanged++
				}
				s.ChangesThatHurt += len(o.Hurts)
			}
		}
	}
	r.Summary = s
}

// clusterID identifies a cluster across the two fleets.
func clusterID(c *fleet.Cluster) string { return c.Namespace + "/" + c.Name }

// releaseID identifies a release within a cluster: `namespace/name`.
func releaseID(s *fleet.Service) string { return s.Namespace + "/" + s.Name }

// side is one cluster's releases in one fleet, indexed.
type side struct {
	f        *fleet.Fleet
	services map[string]*fleet.Service
	objects  map[string]map[manifest.Key]*unstructured.Unstructured
	owner    map[manifest.Key]string
	// live holds the releases whose objects were read from a live cluster (fleet.LiveSource: the umbrella's
	// Flux objects of `kof diff --live`): their values are unknown and their objects carry what the API server
	// and the controllers wrote (asRendered).
	live map[string]bool
}

// newSide indexes c's services (nil c: none) with the objects of each, its chart's CRDs included.
func newSide(f *fleet.Fleet, c *fleet.Cluster) (*side, error) {
	s := &side{f: f, services: map[string]*fleet.Service{}, objects: map[string]map[manifest.Key]*unstructured.Unstructured{},
		owner: map[manifest.Key]string{}, live: map[string]bool{}}
	if c == nil {
		return s, nil
	}
	for _, svc := range c.Services {
		id := releaseID(svc)
		s.services[id] = svc
		objs := map[manifest.Key]*unstructured.Unstructured{}
		if svc.Objects != nil {
			for _, e := range svc.Objects.Entries() {
				o := e.Unstructured
				if e.Source == fleet.LiveSource {
					s.live[id], o = true, asRendered(o)
				}
				objs[manifest.KeyOf(o)] = o
			}
		}
		if svc.Local && !svc.Resources && svc.Chart != "" {
			crds, err := f.ChartCRDs(svc.Chart)
			if err != nil {
				return nil, fmt.Errorf("cluster %s release %s: %w", c.Dir, id, err)
			}
			for _, o := range crds {
				objs[manifest.KeyOf(o)] = o
			}
		}
		s.objects[id] = objs
		for k := range objs {
			if _, ok := s.owner[k]; !ok {
				s.owner[k] = id
			}
		}
	}
	return s, nil
}

// compareCluster compares one cluster of the old fleet with the same cluster of the new one (either may be nil).
func compareCluster(oldF, newF *fleet.Fleet, oc, nc *fleet.Cluster) (Cluster, error) {
	ref := nc
	if ref == nil {
		ref = oc
	}
	out := Cluster{Name: ref.Name, Namespace: ref.Namespace, Dir: ref.Dir, Role: ref.Role, Status: Unchanged}
	o, err := newSide(oldF, oc)
	if err != nil {
		return out, err
	}
	n, err := newSide(newF, nc)
	if err != nil {
		return out, err
	}
	out.Problems, out.Hurts = newProblems(oc, nc)
	var order []string
	if nc != nil {
		for _, s := range nc.Services {
			order = append(order, releaseID(s))
		}
	}
	if oc != nil {
		for _, s := range oc.Services {
			if n.services[releaseID(s)] == nil {
				order = append(order, releaseID(s))
			}
		}
	}
	for _, id := range order {
		rel, unchanged := compareRelease(id, o, n)
		out.unchanged += unchanged
		if rel.Status != Unchanged {
			out.Releases = append(out.Releases, rel)
		}
	}
	switch {
	case oc == nil:
		out.Status = Added
	case nc == nil:
		out.Status = Removed
	case len(out.Releases) > 0 || len(out.Problems) > 0:
		out.Status = Changed
	}
	return out, nil
}

// newProblems returns the cluster-level problems of nc (its errors and check findings; a failed release is reported
// on the release) that oc does not have, each also as a Hurt.
func newProblems(oc, nc *fleet.Cluster) ([]string, []Hurt) {
	if nc == nil {
		return nil, nil
	}
	had := map[string]bool{}
	if oc != nil {
		for _, p := range clusterProblems(oc) {
			had[p] = true
		}
	}
	var probs []string
	var hurts []Hurt
	for _, p := range clusterProblems(nc) {
		if !had[p] {
			probs = append(probs, p)
			hurts = append(hurts, Hurt{Reason: ReasonNewProblem, Message: p})
		}
	}
	return probs, hurts
}

// clusterProblems returns c's own errors and check findings as text.
func clusterProblems(c *fleet.Cluster) []string {
	out := make([]string, 0, len(c.Errors)+len(c.Findings))
	for _, err := range c.Errors {
		out = append(out, err.Error())
	}
	for _, f := range c.Findings {
		out = append(out, "check "+f.String())
	}
	return out
}

// compareRelease compares release id between the two sides of a cluster; it also returns the number of its objects
// that do not change.
func compareRelease(id string, o, n *side) (Release, int) {
	unchanged := 0
	ov, nv := o.services[id], n.services[id]
	ref := nv
	if ref == nil {
		ref = ov
	}
	rel := Release{Name: ref.Name, Namespace: ref.Namespace, Via: ref.Via, Status: Unchanged}
	switch {
	case ov == nil:
		rel.Status = Added
	case nv == nil:
		rel.Status = Removed
	default:
		rel.Fields = releaseFields(ov, nv)
		if !o.live[id] && !n.live[id] {
			rel.Values = Fields(ov.Values, nv.Values, false) // a live side's umbrella values are not known
		}
		if ov.Via != nv.Via {
			rel.Hurts = append(rel.Hurts, Hurt{Reason: ReasonOwnerMoved, Message: ownerMovedMessage(ov.Via, nv.Via)})
		}
		if nv.Err != nil && ov.Err == nil {
			rel.Hurts = append(rel.Hurts, Hurt{Reason: ReasonNewProblem, Message: "the new release fails: " +
				nv.Err.Error()})
		}
	}
	oldObjs, newObjs := o.objects[id], n.objects[id]
	live := o.live[id] || n.live[id]
	for _, k := range sortedKeys(oldObjs, newObjs) {
		obj := compareObject(k, id, oldObjs[k], newObjs[k], n, live)
		if obj.Status == Added && o.owner[k] != "" && o.owner[k] != id {
			continue // reported as moved under its old release
		}
		if obj.Status == Unchanged {
			unchanged++
		} else {
			rel.Objects = append(rel.Objects, obj)
		}
	}
	if rel.Status == Unchanged && (len(rel.Fields) > 0 || len(rel.Values) > 0 || len(rel.Objects) > 0 ||
		len(rel.Hurts) > 0) {
		rel.Status = Changed
	}
	return rel, unchanged
}

// ownerMovedMessage says why a release that moves from owner from to owner to (two Vias) hurts and, when both are
// Flux HelmReleases (one moved to another namespace, as the umbrella's moved out of KCM's system namespace), how to
// move it without an uninstall: helm-controller deletes a suspended HelmRelease without uninstalling its release,
// and a new HelmRelease adopts an existing release of its name and storage namespace (Flux helm-controller
// v1.4: a release found in storage with no history of the object is upgraded, not installed). docs/upgrade.md,
// "HelmReleases that move".
func ownerMovedMessage(from, to string) string {
	msg := fmt.Sprintf("the release moves from %s to %s: the old owner uninstalls it while the new one installs it",
		from, to)
	old, okOld := strings.CutPrefix(from, "HelmRelease ")
	_, okNew := strings.CutPrefix(to, "HelmRelease ")
	ns, name, okName := strings.Cut(old, "/")
	if !okOld || !okNew || !okName {
		return msg
	}
	return msg + fmt.Sprintf("; suspend the old HelmRelease before the upgrade so that deleting it uninstalls "+
		"nothing and the new one adopts the release: kubectl -n %s patch helmrelease %s --type merge -p "+
		`'{"spec":{"suspend":true}}'`, ns, name)
}

// releaseFields compares what delivers a release and its chart.
func releaseFields(o, n *fleet.Service) []Field {
	var out []Field
	for _, f := range []struct {
		path     string
		old, new string
	}{{"via", o.Via, n.Via}, {"chart", o.Chart, n.Chart}, {"version", o.Version, n.Version},
		{"repository", o.Repository, n.Repository}, {"template", o.Template, n.Template}} {
		if f.old != f.new {
			out = append(out, Field{Path: f.path, Change: Changed, Old: f.old, New: f.new})
		}
	}
	return out
}

// compareObject compares one object of release id (either side nil); n is the new side of the cluster, to find an
// object that moves to another release. With live (one side read from a live cluster), durations are compared as
// durations (liveFields).
func compareObject(k manifest.Key, id string, o, nw *unstructured.Unstructured, n *side, live bool) Object {
	out := Object{Key: k.String(), Status: Unchanged}
	o, nw = withoutStatus(o), withoutStatus(nw)
	switch {
	case o == nil:
		out.Status = Added // a renamed credential or volume is reported where the old object is removed
	case nw == nil:
		if to := n.owner[k]; to != "" && to != id {
			moved := withoutStatus(n.objects[to][k])
			out.Status, out.MovedTo = Moved, to
			out.Fields = objectFields(k, o, moved, live)
			out.Hurts = append(changedHurts(k, o, moved), Hurt{Reason: ReasonOwnerMoved, Message: fmt.Sprintf(
				"release %s renders it instead of %s: Helm refuses to adopt an object another release owns, and "+
					"uninstalling %s deletes it", to, id, id)})
			return out
		}
		out.Status = Removed
		out.Hurts = removedHurts(k, o, n.objects[id])
	default:
		if reflect.DeepEqual(o.Object, nw.Object) {
			return out
		}
		out.Fields = objectFields(k, o, nw, live)
		if len(out.Fields) == 0 {
			return out
		}
		out.Status = Changed
		out.Hurts = changedHurts(k, o, nw)
	}
	return out
}

// withoutStatus returns o without its status (a live object's, such as the umbrella's HelmReleases read with
// --live: a render has none, and an upgrade does not set it), sharing the rest; nil stays nil.
func withoutStatus(o *unstructured.Unstructured) *unstructured.Unstructured {
	if o == nil {
		return nil
	}
	if _, ok := o.Object["status"]; !ok {
		return o
	}
	m := make(map[string]any, len(o.Object))
	for k, v := range o.Object {
		if k != "status" {
			m[k] = v
		}
	}
	return &unstructured.Unstructured{Object: m}
}

// objectFields returns the field-level changes of an object, with Secret data redacted; with live, durations are
// compared as durations.
func objectFields(k manifest.Key, o, n *unstructured.Unstructured, live bool) []Field {
	return fields(o.Object, n.Object, k.Group == "" && k.Kind == "Secret", live)
}

// serverAnnotations are the annotations Helm adds to every object it installs (its ownership record): a live
// object has them, a render never does.
var serverAnnotations = []string{"meta.helm.sh/release-name", "meta.helm.sh/release-namespace"}

// asRendered returns the live object o as a render would give it: without status, without the metadata the API
// server and the controllers set (uid, resourceVersion, generation, creationTimestamp, managedFields, finalizers,
// ownerReferences, deletionTimestamp) and without Helm's ownership annotations (serverAnnotations), sharing the
// rest of o. Without it, `kof diff --live` reports every live object as changed by fields no chart sets.
func asRendered(o *unstructured.Unstructured) *unstructured.Unstructured {
	out := withoutStatus(o)
	md, ok := out.Object["metadata"].(map[string]any)
	if !ok {
		return out
	}
	clean := make(map[string]any, len(md))
	for k, v := range md {
		switch k {
		case "uid", "resourceVersion", "generation", "creationTimestamp", "managedFields", "finalizers",
			"ownerReferences", "deletionTimestamp", "deletionGracePeriodSeconds", "selfLink":
		case "annotations":
			if a, ok := v.(map[string]any); ok {
				kept := make(map[string]any, len(a))
				for ak, av := range a {
					if !slices.Contains(serverAnnotations, ak) {
						kept[ak] = av
					}
				}
				if len(kept) > 0 {
					clean[k] = kept
				}
				continue
			}
			clean[k] = v
		default:
			clean[k] = v
		}
	}
	m := make(map[string]any, len(out.Object))
	for k, v := range out.Object {
		m[k] = v
	}
	m["metadata"] = clean
	return &unstructured.Unstructured{Object: m}
}

// sortedKeys returns the keys of a and b, sorted by their string form.
func sortedKeys(a, b map[manifest.Key]*unstructured.Unstructured) []manifest.Key {
	keys := make([]manifest.Key, 0, len(a)+len(b))
	for k := range a {
		keys = append(keys, k)
	}
	for k := range b {
		if _, ok := a[k]; !ok {
			keys = append(keys, k)
		}
	}
	sort.Slice(keys, func(i, j int) bool { return keys[i].String() < keys[j].String() })
	return keys
}
