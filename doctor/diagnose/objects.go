package diagnose

import (
	"fmt"
	"maps"
	"slices"
	"sort"
	"strings"
	"time"

	kcmv1 "github.com/K0rdent/kcm/api/v1beta1"
	corev1 "k8s.io/api/core/v1"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/apimachinery/pkg/apis/meta/v1/unstructured"

	"kof.dev/kof/chartlib/fleet"
	kofv1 "kof.dev/kof/operator/api/v1beta1"
	"kof.dev/kof/operator/discovery"
	"kof.dev/kof/operator/names"
)

// Kinds of the objects the operator makes (docs/contract.md, "Objects the operator writes").
const (
	kindConfigMap           = "ConfigMap"
	kindSecret              = "Secret"
	kindVMUser              = "VMUser"
	kindPromxyServerGroup   = "PromxyServerGroup"
	kindStorageConnection   = "VMStorageConnection"
	kindMultiClusterService = "MultiClusterService"
)

// listOfKind names the list of Snapshot.Unreadable an operator object kind is read by.
func listOfKind(kind string) string {
	switch kind {
	case kindConfigMap:
		return "operator ConfigMaps"
	case kindSecret:
		return "operator Secrets"
	case kindVMUser:
		return "operator VMUsers"
	case kindPromxyServerGroup:
		return "PromxyServerGroups"
	case kindStorageConnection:
		return "VMStorageConnections"
	}
	return "MultiClusterServices"
}

// maxEvents is how many events a cluster shows.
const maxEvents = 20

// wanted is one object the operator makes for a cluster; required ones are reported when missing.
type wanted struct {
	kind, namespace, name string
	required              bool
}

// expected returns the objects the operator makes for c, by the names of operator/names: a regional (not in
// regionless mode) gets its ConfigMap, vmrules ConfigMap, admin VMUser bundle, PromxyServerGroup and three
// VMStorageConnections; a child its ConfigMap and VMUser bundle with the propagation MultiClusterService; the
// management cluster in regionless mode the regionless ConfigMap with the same regional objects. Objects kof render
// predicts are required, and so are the VMUser of a predicted bundle and a healthy regional's PromxyServerGroup.
func (b *builder) expected(c *Cluster) []wanted {
	ns, name := c.Namespace, c.Name
	regionalSet := func(ns, name string) []wanted {
		admin := names.AdminVMUserBase(ns, name)
		out := []wanted{
			{kindConfigMap, ns, names.RegionalConfigMap(name), false},
			{kindConfigMap, ns, names.VMRulesConfigMap(name), false},
			{kindSecret, ns, names.VMUserSecret(admin), false},
			{kindVMUser, ns, names.VMUser(admin), false},
			{kindPromxyServerGroup, ns, names.PromxyServerGroup(ns, name), !b.broken[ns+"/"+name]},
		}
		for _, k := range []names.StorageKind{names.StorageTraces, names.StorageLogs, names.StorageAuditLogs} {
			out = append(out, wanted{kindStorageConnection, ns, names.StorageConnection(k, ns, name), false})
		}
		return out
	}
	switch {
	case c.Role == fleet.RoleManagement && b.cfg.Regionless:
		return regionalSet(b.cfg.KCMNamespace, b.cfg.RegionlessClusterName)
	case c.Role == fleet.RoleRegional && !b.cfg.Regionless:
		return regionalSet(ns, name)
	case c.Role == fleet.RoleChild:
		base := names.ChildVMUserBase(ns, name)
		return []wanted{
			{kindConfigMap, ns, names.ChildConfigMap(name), false},
			{kindSecret, ns, names.VMUserSecret(base), false},
			{kindVMUser, ns, names.VMUser(base), false},
			{kindMultiClusterService, "", names.VMUserPropagation(base), false},
		}
	}
	return nil
}

// operatorObjects lists every cluster's operator objects, predicted and live, compares the two, sets the
// endpoints and reports missing, differing and not-ready objects.
func (b *builder) operatorObjects() {
	for _, c := range b.d.Clusters {
		var predictedSecret string
		for _, w := range b.expected(c) {
			o := OperatorObject{Kind: w.kind, Namespace: w.namespace, Name: w.name}
			pred := b.predictedObject(w)
			o.Predicted = pred != nil
			if w.kind == kindSecret && o.Predicted {
				predictedSecret = w.name
			}
			required := w.required || o.Predicted ||
				(w.kind == kindVMUser && predictedSecret != "" && strings.TrimPrefix(w.name, names.VMUserPrefix) ==
					strings.TrimPrefix(predictedSecret, names.VMUserSecretPrefix))
			live, labels, conds := b.liveObject(w)
			o.Live, o.LiveUnknown, o.Conditions = live, !b.live.readable(listOfKind(w.kind)), conds
			if !o.Live && !o.Predicted && !required {
				continue
			}
			if o.Live && o.Predicted {
				o.Differences = b.compare(w, pred, labels)
			}
			b.objectFindings(c, o, required)
			c.Objects = append(c.Objects, o)
		}
		c.Endpoints = b.endpoints(c)
	}
}

// objectFindings reports a required object that is missing, a live object that differs from its prediction and
// a False condition.
func (b *builder) objectFindings(c *Cluster, o OperatorObject, required bool) {
	switch {
	case required && !o.Live && !o.LiveUnknown:
		c.Findings = append(c.Findings, newFinding(CodeOperatorObjectMissing, c.Dir, o.Ref(), "",
			"the kof-operator has not made "+o.Ref(),
			"check the operator's events on the ClusterDeployment and its log; it makes the object on its next "+
				"reconcile once the cause is gone"))
	case len(o.Differences) > 0:
		c.Findings = append(c.Findings, newFinding(CodeOperatorObjectDiffers, c.Dir, o.Ref(),
			strings.SplitN(o.Differences[0], ":", 2)[0],
			fmt.Sprintf("%s differs from what kof render predicts: %s", o.Ref(), strings.Join(o.Differences, "; ")),
			"if the inputs changed recently, wait for the operator; otherwise the live operator is another version "+
				"than the charts the prediction renders (see the prediction's charts)"))
	}
	otherFalse := false // Ready summarises the other conditions (docs/style.md, "Reconcilers"): report the cause once
	for _, cond := range o.Conditions {
		otherFalse = otherFalse || (cond.Type != kofv1.ConditionReady && cond.Status == string(metav1.ConditionFalse))
	}
	for _, cond := range o.Conditions {
		if cond.Status == string(metav1.ConditionFalse) && cond.Reason == kofv1.ReasonNoPromxyPods {
			b.promxyNotRunning(o, cond)
			continue
		}
		if cond.Status == string(metav1.ConditionFalse) && (cond.Type != kofv1.ConditionReady || !otherFalse) {
			c.Findings = append(c.Findings, newFinding(CodeObjectNotReady, c.Dir, o.Ref(),
				"status.conditions["+cond.Type+"]", fmt.Sprintf("%s is not %s (%s): %s", o.Ref(), cond.Type,
					cond.Reason, cond.Message), "fix what the message names; the operator retries"))
		}
	}
}

// promxyNotRunning reports, once per diagnosis and on the management cluster, that the config of PromxyServerGroup
// o waits for a Running promxy pod: the groups themselves are fine (the config Secret holds them and a starting pod
// loads it), the promxy Deployment is what to look at.
func (b *builder) promxyNotRunning(o OperatorObject, cond Condition) {
	if b.d == nil || len(b.d.Clusters) == 0 {
		return // no management cluster to report on (a partial diagnosis)
	}
	m := b.mgmt()
	for _, f := range m.Findings {
		if f.Code == CodePromxyNotRunning {
			return
		}
	}
	m.Findings = append(m.Findings, newFinding(CodePromxyNotRunning, m.Dir, o.Ref(),
		"status.conditions["+cond.Type+"]", "promxy has not loaded the server groups: "+cond.Message,
		"check kof-mothership's promxy Deployment and its pods (scheduling, image pull, crash loop); the operator "+
			"reloads promxy as soon as a pod runs"))
}

// predictedObject returns the predicted operator output w, nil when the prediction has none.
func (b *builder) predictedObject(w wanted) *unstructured.Unstructured {
	return b.x.predicted[objectKey(w.kind, w.namespace, w.name)]
}

// liveObject returns whether w exists, its labels and its conditions.
func (b *builder) liveObject(w wanted) (bool, map[string]string, []Condition) {
	if w.kind == kindConfigMap {
		if cm := b.x.configMaps[w.namespace+"/"+w.name]; cm != nil {
			return true, cm.Labels, nil
		}
		return false, nil, nil
	}
	o, ok := b.x.objects[objectKey(w.kind, w.namespace, w.name)]
	return ok, o.labels, o.conditions
}

// conditions converts status conditions.
func conditions(cs []metav1.Condition) []Condition {
	out := make([]Condition, 0, len(cs))
	for _, c := range cs {
		out = append(out, Condition{Type: c.Type, Status: string(c.Status), Reason: c.Reason, Message: c.Message})
	}
	return out
}

// compare returns the differences of the live object w from pred: every label pred sets, and for a ConfigMap every
// data key of either (a Secret's data is never read).
func (b *builder) compare(w wanted, pred *unstructured.Unstructured, liveLabels map[string]string) []string {
	var out []string
	for _, k := range slices.Sorted(maps.Keys(pred.GetLabels())) {
		if v := pred.GetLabels()[k]; liveLabels[k] != v {
			out = append(out, fmt.Sprintf("metadata.labels[%s]: live %s, predicted %q", k, quoteOrAbsent(liveLabels, k), v))
		}
	}
	if w.kind != kindConfigMap {
		return out
	}
	live := b.x.configMaps[w.namespace+"/"+w.name].Data
	want, _, _ := unstructured.NestedStringMap(pred.Object, "data")
	keys := map[string]bool{}
	for k := range live {
		keys[k] = true
	}
	for k := range want {
		keys[k] = true
	}
	sorted := make([]string, 0, len(keys))
	for k := range keys {
		sorted = append(sorted, k)
	}
	sort.Strings(sorted)
	for _, k := range sorted {
		lv, lok := live[k]
		pv, pok := want[k]
		switch {
		case lok && pok && lv == pv:
		case !pok:
			out = append(out, fmt.Sprintf("data.%s: live %s, predicted absent", k, short(lv)))
		case !lok:
			out = append(out, fmt.Sprintf("data.%s: live absent, predicted %s", k, short(pv)))
		default:
			out = append(out, fmt.Sprintf("data.%s: live %s, predicted %s", k, short(lv), short(pv)))
		}
	}
	return out
}

// short quotes v, or says how long it is when it spans lines or is long.
func short(v string) string {
	if strings.Contains(v, "\n") || len(v) > 100 {
		return fmt.Sprintf("(%d bytes)", len(v))
	}
	return fmt.Sprintf("%q", v)
}

func quoteOrAbsent(m map[string]string, k string) string {
	if v, ok := m[k]; ok {
		return fmt.Sprintf("%q", v)
	}
	return "absent"
}

// endpoints returns the storage endpoints of c's operator ConfigMap: the live one, else the predicted one.
func (b *builder) endpoints(c *Cluster) []Endpoint {
	var data map[string]string
	predicted := false
	for _, o := range c.Objects {
		if o.Kind != kindConfigMap || strings.HasPrefix(o.Name, names.VMRulesConfigMapPrefix) {
			continue
		}
		if cm := b.x.configMaps[o.Namespace+"/"+o.Name]; cm != nil {
			data = cm.Data
		} else if p := b.predictedObject(wanted{kind: o.Kind, namespace: o.Namespace, name: o.Name}); p != nil {
			data, _, _ = unstructured.NestedStringMap(p.Object, "data")
			predicted = true
		}
		break
	}
	if data == nil {
		return nil
	}
	if c.Role == fleet.RoleChild && c.Regional == "" && data[discovery.KeyRegionalClusterName] != "" {
		c.Regional = data[discovery.KeyRegionalClusterNamespace] + "/" + data[discovery.KeyRegionalClusterName]
	}
	set := discovery.SetFromData(data)
	out := []Endpoint{
		{Signal: "metrics", Write: set.WriteMetrics, Read: set.ReadMetrics},
		{Signal: "logs", Write: set.WriteLogs, Read: set.ReadLogs},
		{Signal: "audit logs", Write: set.WriteAuditLogs, Read: set.ReadAuditLogs},
		{Signal: "traces", Write: set.WriteTraces, Read: set.ReadTraces},
	}
	for i := range out {
		out[i].Predicted = predicted
	}
	return out
}

// eventTime returns when e last happened.
func eventTime(e corev1.Event) time.Time {
	switch {
	case !e.EventTime.IsZero():
		return e.EventTime.Time
	case !e.LastTimestamp.IsZero():
		return e.LastTimestamp.Time
	case !e.FirstTimestamp.IsZero():
		return e.FirstTimestamp.Time
	}
	return e.CreationTimestamp.Time
}

// events attaches to every cluster the events regarding its ClusterDeployment or one of its operator objects,
// newest first (Snapshot.Events is sorted so).
func (b *builder) events() {
	for _, c := range b.d.Clusters {
		var keys []string
		if c.Role != fleet.RoleManagement {
			keys = append(keys, objectKey(kcmv1.ClusterDeploymentKind, c.Namespace, c.Name))
		}
		for _, o := range c.Objects {
			keys = append(keys, objectKey(o.Kind, o.Namespace, o.Name))
		}
		var evs []corev1.Event
		for _, k := range keys {
			evs = append(evs, b.x.events[k]...)
		}
		sort.SliceStable(evs, func(i, j int) bool { return eventTime(evs[j]).Before(eventTime(evs[i])) })
		for _, e := range evs {
			if len(c.Events) >= maxEvents {
				break
			}
			io := e.InvolvedObject
			ref := io.Kind + " " + io.Name
			if io.Namespace != "" {
				ref = io.Kind + " " + io.Namespace + "/" + io.Name
			}
			c.Events = append(c.Events, Event{Type: e.Type, Object: ref, Reason: e.Reason, Message: e.Message,
				Controller: controllerOf(e), Count: e.Count, Time: eventTime(e)})
		}
	}
}

// controllerOf returns the controller that reported e.
func controllerOf(e corev1.Event) string {
	if e.ReportingController != "" {
		return e.ReportingController
	}
	return e.Source.Component
}

// operatorControllerPrefix starts the name every kof-operator controller reports events under
// (cmd/kof-operator: kof-clusterdeployment, kof-regional, kof-promxyservergroup, ...).
const operatorControllerPrefix = "kof-"

// operatorWarnings reports, for a cluster without an error finding of its own, the operator's latest event about
// an object when that event is a warning: the operator knows something the other checks did not catch.
func (b *builder) operatorWarnings() {
	for _, c := range b.d.Clusters {
		if count(c.Findings, SeverityError) > 0 {
			continue
		}
		latest := map[string]Event{}
		var order []string
		for _, e := range c.Events {
			if !strings.HasPrefix(e.Controller, operatorControllerPrefix) {
				continue
			}
			k := e.Object + "|" + e.Controller
			if _, seen := latest[k]; !seen {
				latest[k] = e
				order = append(order, k)
			}
		}
		for _, k := range order {
			e := latest[k]
			if e.Type == corev1.EventTypeWarning && e.Reason == kofv1.ReasonNoPromxyPods {
				continue // the PromxyNotRunning finding of the management cluster covers it (promxyNotRunning)
			}
			if e.Type == corev1.EventTypeWarning {
				c.Findings = append(c.Findings, newFinding(CodeOperatorWarning, c.Dir, e.Object, "",
					fmt.Sprintf("the kof-operator reports %s: %s", e.Reason, e.Message),
					"fix what the message names; the operator reconciles again when the object changes"))
			}
		}
	}
}
