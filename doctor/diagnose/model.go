package diagnose

import (
	"strings"
	"time"
)

// Diagnosis is what the engine found on one management cluster: every cluster with what it should get and what it
// gets, the storage objects, the merged rule sets and every finding.
type Diagnosis struct {
	// Clusters are the management cluster first, then every ClusterDeployment by namespace and name.
	Clusters []*Cluster `json:"clusters"`
	// Storage lists the PromxyServerGroups and VMStorageConnections.
	Storage Storage `json:"storage"`
	// Rules are the merged rule sets, one per cluster that has any.
	Rules []RuleSet `json:"rules"`
	// Findings concern the fleet as a whole (Finding.Cluster is "").
	Findings []Finding `json:"findings"`
	// Prediction says what the comparison with kof render used.
	Prediction PredictionInfo `json:"prediction"`
}

// PredictionInfo describes the offline render the live objects were compared with.
type PredictionInfo struct {
	// Charts says which charts were rendered (EmbeddedCharts, or the charts in a folder); Layer1 where layer 1
	// came from (the live HelmReleases or the values files given).
	Charts string `json:"charts"`
	Layer1 string `json:"layer1"`
	// Error is set when the render failed as a whole; nothing was compared then.
	Error string `json:"error,omitempty"`
}

// Cluster is one cluster of the fleet as the diagnosis sees it.
type Cluster struct {
	// Name and Namespace of the ClusterDeployment (mgmt/mgmt for the management cluster); Dir is its name in
	// findings and output folders (fleet.Cluster.Dir).
	Name      string `json:"name"`
	Namespace string `json:"namespace"`
	Dir       string `json:"dir"`
	// Role is fleet.RoleManagement, RoleRegional, RoleChild or RoleNone.
	Role string `json:"role"`
	// Regional is the regional cluster a child writes to (`namespace/name`, or the management cluster in
	// regionless mode); Binding says why.
	Regional string `json:"regional,omitempty"`
	Binding  string `json:"binding,omitempty"`
	// Endpoints are the storage endpoints of the cluster's operator ConfigMap (live, else predicted).
	Endpoints []Endpoint `json:"endpoints,omitempty"`
	// Selections are the MultiClusterServices that select the cluster, and the KOF ones that do not, with why.
	Selections []Selection `json:"selections"`
	// Services are what the cluster should receive, with their state as KCM and Sveltos report it.
	Services []Service `json:"services"`
	// Objects are what the operator makes for the cluster, predicted and live.
	Objects []OperatorObject `json:"objects"`
	// Events are the latest events about the cluster and its operator objects, newest first.
	Events []Event `json:"events"`
	// Findings concern this cluster, worst first.
	Findings []Finding `json:"findings"`
}

// Key returns `namespace/name`.
func (c *Cluster) Key() string { return c.Namespace + "/" + c.Name }

// State summarises the findings: the worst severity among them, or "ok".
func (c *Cluster) State() string {
	switch {
	case count(c.Findings, SeverityError) > 0:
		return string(SeverityError)
	case count(c.Findings, SeverityWarning) > 0:
		return string(SeverityWarning)
	}
	return StateOK
}

// StateOK is the state of a cluster without errors or warnings.
const StateOK = "ok"

// Endpoint is one signal's write and read URL.
type Endpoint struct {
	Signal string `json:"signal"`
	Write  string `json:"write,omitempty"`
	Read   string `json:"read,omitempty"`
	// Predicted is true when the URLs come from the prediction because the live ConfigMap is missing.
	Predicted bool `json:"predicted,omitempty"`
}

// Selection is one MultiClusterService checked against the cluster.
type Selection struct {
	// MCS is the MultiClusterService's name; Operator is true for the ones the kof-operator makes.
	MCS      string `json:"mcs"`
	Operator bool   `json:"operator,omitempty"`
	// Matches reports whether it selects the cluster; Terms are its selector's terms, failing ones explained.
	Matches bool   `json:"matches"`
	Terms   []Term `json:"terms,omitempty"`
	// Reason is set when the selector was not even asked: the management cluster is a candidate only of
	// MultiClusterServices with spec.serviceSpec.provider.selfManagement.
	Reason string `json:"reason,omitempty"`
	// KCM is what the MultiClusterService's status.matchingClusters says of the cluster: KCMDeployed,
	// KCMNotDeployed, KCMNotListed, or "" when the status is not current.
	KCM string `json:"kcm,omitempty"`
}

// What a MultiClusterService's status says of a cluster (KCM v1beta1 MatchingCluster.Deployed).
const (
	KCMDeployed    = "all services deployed"
	KCMNotDeployed = "not all services deployed"
	KCMNotListed   = "not listed"
)

// Service is one service (Helm release) the cluster should receive.
type Service struct {
	// Name and Namespace of the release; MCS and Template name what delivers it ("" on the management cluster,
	// where Via says which HelmRelease).
	Name      string `json:"name"`
	Namespace string `json:"namespace"`
	MCS       string `json:"mcs,omitempty"`
	Via       string `json:"via"`
	Template  string `json:"template,omitempty"`
	// Chart and Version of the predicted render; Objects is its number of objects.
	Chart   string `json:"chart,omitempty"`
	Version string `json:"version,omitempty"`
	Objects int    `json:"objects"`
	// PredictionError is the render failure of this service, if any.
	PredictionError string `json:"predictionError,omitempty"`
	// State is as KCM (ClusterDeployment status.services) or Sveltos (ClusterSummary) report it: Deployed,
	// Provisioning, Pending, Failed, Deleting, or StateNotReported; StateSource names where it was read.
	State       string `json:"state"`
	StateSource string `json:"stateSource,omitempty"`
	Message     string `json:"message,omitempty"`
}

// StateNotReported is the state of a service nobody reports on.
const StateNotReported = "not reported"

// OperatorObject is one object the kof-operator makes for a cluster.
type OperatorObject struct {
	Kind      string `json:"kind"`
	Namespace string `json:"namespace,omitempty"`
	Name      string `json:"name"`
	// Predicted is true when kof render computes the object offline; Live when it exists (LiveUnknown: the caller
	// may not read its kind).
	Predicted   bool `json:"predicted"`
	Live        bool `json:"live"`
	LiveUnknown bool `json:"liveUnknown,omitempty"`
	// Differences are the fields where live and predicted differ, e.g. `data.write_metrics_endpoint: live "a",
	// predicted "b"`.
	Differences []string `json:"differences,omitempty"`
	// Conditions are the live object's status conditions.
	Conditions []Condition `json:"conditions,omitempty"`
}

// Ref returns `Kind namespace/name` (or `Kind name`).
func (o OperatorObject) Ref() string {
	if o.Namespace == "" {
		return o.Kind + " " + o.Name
	}
	return o.Kind + " " + o.Namespace + "/" + o.Name
}

// Condition is one status condition.
type Condition struct {
	Type    string `json:"type"`
	Status  string `json:"status"`
	Reason  string `json:"reason,omitempty"`
	Message string `json:"message,omitempty"`
}

// Event is one Kubernetes Event.
type Event struct {
	Type string `json:"type"`
	// Object is what it regards: `Kind namespace/name`.
	Object     string    `json:"object"`
	Reason     string    `json:"reason"`
	Message    string    `json:"message"`
	Controller string    `json:"controller,omitempty"`
	Count      int32     `json:"count,omitempty"`
	Time       time.Time `json:"time"`
}

// Storage lists the operator-made objects that connect promxy and the multilevel select clusters to the regionals.
type Storage struct {
	PromxyServerGroups []PromxyServerGroup `json:"promxyServerGroups"`
	Connections        []StorageConnection `json:"connections"`
}

// PromxyServerGroup is one PromxyServerGroup with its conditions.
type PromxyServerGroup struct {
	Namespace string `json:"namespace"`
	Name      string `json:"name"`
	// Cluster is spec.cluster_name; Targets, Scheme and PathPrefix are where promxy reads it.
	Cluster    string      `json:"cluster"`
	Targets    []string    `json:"targets"`
	Scheme     string      `json:"scheme"`
	PathPrefix string      `json:"pathPrefix"`
	Conditions []Condition `json:"conditions"`
}

// StorageConnection is one VMStorageConnection with its conditions.
type StorageConnection struct {
	Namespace string `json:"namespace"`
	Name      string `json:"name"`
	// StorageKind and Storage name the storage cluster whose select it configures (`VLCluster kof/logs`).
	StorageKind string `json:"storageKind"`
	Storage     string `json:"storage"`
	// Address is the storage node the select gets; Conditions are the object's status conditions.
	Address    string      `json:"address"`
	Conditions []Condition `json:"conditions"`
}

// RuleSet is the merged rules of one cluster.
type RuleSet struct {
	// Cluster is the cluster's name ("" for the defaults every cluster gets).
	Cluster string `json:"cluster"`
	// Source names the ConfigMap(s) the rules were read from.
	Source string `json:"source"`
	// Groups are the rule groups in name order.
	Groups []RuleGroup `json:"groups"`
}

// RuleGroup is one named group of rules.
type RuleGroup struct {
	Name  string `json:"name"`
	Kind  string `json:"kind"`
	Rules []Rule `json:"rules"`
}

// Rule is one recording or alerting rule.
type Rule struct {
	// Name is the recorded series or the alert name.
	Name string `json:"name"`
	Expr string `json:"expr"`
}

// Errors returns the number of error findings of the whole diagnosis.
func (d *Diagnosis) Errors() int { return d.countAll(SeverityError) }

// Warnings returns the number of warning findings of the whole diagnosis.
func (d *Diagnosis) Warnings() int { return d.countAll(SeverityWarning) }

func (d *Diagnosis) countAll(sev Severity) int {
	n := count(d.Findings, sev)
	for _, c := range d.Clusters {
		n += count(c.Findings, sev)
	}
	return n
}

// Cluster returns the cluster named ref (its name, its Dir or `namespace/name`), nil when there is none or the name
// is ambiguous.
func (d *Diagnosis) Cluster(ref string) *Cluster {
	var found *Cluster
	for _, c := range d.Clusters {
		if c.Key() == ref || c.Dir == ref {
			return c
		}
		if c.Name == ref && !strings.Contains(ref, "/") {
			if found != nil {
				return nil
			}
			found = c
		}
	}
	return found
}

// AllFindings returns the fleet's findings and then every cluster's, worst first.
func (d *Diagnosis) AllFindings() []Finding {
	out := append([]Finding(nil), d.Findings...)
	for _, c := range d.Clusters {
		out = append(out, c.Findings...)
	}
	sortFindings(out)
	return out
}
