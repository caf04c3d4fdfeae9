package diagnose

import (
	"fmt"
	"sort"
)

// Severity is how bad a finding is: an error means a cluster does not get what it should (kof doctor exits 1), a
// warning that something differs from what is expected, info what the diagnosis could not see or what is still in
// progress.
type Severity string

// Severities, worst first.
const (
	SeverityError   Severity = "error"
	SeverityWarning Severity = "warning"
	SeverityInfo    Severity = "info"
)

// rank orders severities, worst first.
func (s Severity) rank() int {
	switch s {
	case SeverityError:
		return 0
	case SeverityWarning:
		return 1
	}
	return 2
}

// Code names one kind of finding. Every code is listed, with its meaning and fix, in the findings catalogue of
// docs/ui.md (a test keeps the two in step).
type Code string

// The finding codes (docs/ui.md, "Findings catalogue").
const (
	// CodeOperatorMissing: the management cluster has no kof-operator Deployment.
	CodeOperatorMissing Code = "OperatorMissing"
	// CodeOperatorConfigInvalid: the kof-operator Deployment's environment is one the operator refuses.
	CodeOperatorConfigInvalid Code = "OperatorConfigInvalid"
	// CodeNoRegional: a child cluster is bound to no regional cluster (operator/discovery.FindRegional).
	CodeNoRegional Code = "NoRegional"
	// CodeInvalidCluster: a KOF ClusterDeployment cannot be read as the operator reads it (spec.config).
	CodeInvalidCluster Code = "InvalidCluster"
	// CodeRegionalInvalid: a regional cluster's annotations give no valid endpoints (operator/discovery.RegionalData).
	CodeRegionalInvalid Code = "RegionalInvalid"
	// CodeRegionalUnusable: a child is bound to a regional cluster that has errors itself.
	CodeRegionalUnusable Code = "RegionalUnusable"
	// CodeNotSelected: a KOF cluster is selected by no MultiClusterService, so it receives nothing.
	CodeNotSelected Code = "NotSelected"
	// CodeOperatorObjectMissing: an object the operator must make for the cluster does not exist.
	CodeOperatorObjectMissing Code = "OperatorObjectMissing"
	// CodeOperatorObjectDiffers: an operator object differs from what kof render predicts.
	CodeOperatorObjectDiffers Code = "OperatorObjectDiffers"
	// CodeOperatorWarning: the operator's latest event about the cluster is a warning.
	CodeOperatorWarning Code = "OperatorWarning"
	// CodeObjectNotReady: an operator-made object (PromxyServerGroup, VMStorageConnection) has a False condition.
	CodeObjectNotReady Code = "ObjectNotReady"
	// CodeCertManagerGatewayAPI: the management cluster's issuers solve ACME challenges with Gateway API HTTPRoutes,
	// but its cert-manager controller runs without Gateway API support.
	CodeCertManagerGatewayAPI Code = "CertManagerGatewayAPI"
	// CodePromxyNotRunning: a PromxyServerGroup waits for a Running promxy pod to reload its config (operator reason
	// NoPromxyPods); reported once, on the management cluster, where promxy runs.
	CodePromxyNotRunning Code = "PromxyNotRunning"
	// CodeServiceFailed: KCM or Sveltos reports a service of the cluster as failed.
	CodeServiceFailed Code = "ServiceFailed"
	// CodeServiceInProgress: KCM or Sveltos reports a service as provisioning, pending or deleting.
	CodeServiceInProgress Code = "ServiceInProgress"
	// CodeServiceNotDelivered: KCM reports the cluster's services, but not one that kof render predicts.
	CodeServiceNotDelivered Code = "ServiceNotDelivered"
	// CodeNotListed: a MultiClusterService's status does not list a cluster its selector matches.
	CodeNotListed Code = "NotListed"
	// CodeServiceTemplateInvalid: KCM reports a KOF ServiceTemplate, or one a MultiClusterService uses, invalid.
	CodeServiceTemplateInvalid Code = "ServiceTemplateInvalid"
	// CodeMCSConditionFalse: a MultiClusterService has a False condition.
	CodeMCSConditionFalse Code = "MCSConditionFalse"
	// CodeMCSMissing: a MultiClusterService kof render predicts does not exist.
	CodeMCSMissing Code = "MCSMissing"
	// CodeMCSDiffers: a MultiClusterService differs from what kof render predicts.
	CodeMCSDiffers Code = "MCSDiffers"
	// CodeHelmReleaseFailed: a HelmRelease of the umbrella is not Ready.
	CodeHelmReleaseFailed Code = "HelmReleaseFailed"
	// CodeHelmReleaseInProgress: a HelmRelease of the umbrella has not finished reconciling.
	CodeHelmReleaseInProgress Code = "HelmReleaseInProgress"
	// CodeChartVersionDiffers: the management cluster runs another version of a KOF chart than the prediction renders.
	CodeChartVersionDiffers Code = "ChartVersionDiffers"
	// CodePredictionFailed: kof render fails for the cluster (or the whole fleet) with the live inputs.
	CodePredictionFailed Code = "PredictionFailed"
	// CodeLayerTwoHazard: a MultiClusterService's values text has a layer-2 template hazard (chartlib/sveltos.Lint).
	CodeLayerTwoHazard Code = "LayerTwoHazard"
	// CodeStatusNotReported: KCM and Sveltos report no service state at all.
	CodeStatusNotReported Code = "StatusNotReported"
	// CodeUnreadable: the caller may not read some objects, or the cluster does not serve their kind.
	CodeUnreadable Code = "Unreadable"
)

// Catalogue returns every finding code with its severity, in catalogue order.
func Catalogue() []CatalogueEntry {
	return []CatalogueEntry{
		{CodeOperatorMissing, SeverityError}, {CodeOperatorConfigInvalid, SeverityError},
		{CodeNoRegional, SeverityError}, {CodeInvalidCluster, SeverityError}, {CodeRegionalInvalid, SeverityError},
		{CodeRegionalUnusable, SeverityError}, {CodeNotSelected, SeverityError},
		{CodeOperatorObjectMissing, SeverityError}, {CodeOperatorObjectDiffers, SeverityWarning},
		{CodeOperatorWarning, SeverityError}, {CodeObjectNotReady, SeverityError},
		{CodePromxyNotRunning, SeverityWarning}, {CodeCertManagerGatewayAPI, SeverityError},
		{CodeServiceFailed, SeverityError}, {CodeServiceInProgress, SeverityInfo},
		{CodeServiceNotDelivered, SeverityWarning}, {CodeNotListed, SeverityWarning},
		{CodeServiceTemplateInvalid, SeverityError}, {CodeMCSConditionFalse, SeverityError}, {CodeMCSMissing, SeverityError}, {CodeMCSDiffers, SeverityWarning},
		{CodeHelmReleaseFailed, SeverityError}, {CodeHelmReleaseInProgress, SeverityInfo},
		{CodeChartVersionDiffers, SeverityWarning}, {CodePredictionFailed, SeverityError},
		{CodeLayerTwoHazard, SeverityWarning}, {CodeStatusNotReported, SeverityInfo}, {CodeUnreadable, SeverityInfo},
	}
}

// CatalogueEntry is one finding code and the severity every finding of that code has.
type CatalogueEntry struct {
	Code     Code
	Severity Severity
}

// severityOf returns the catalogue severity of code (info for a code not in the catalogue).
func severityOf(code Code) Severity {
	for _, e := range Catalogue() {
		if e.Code == code {
			return e.Severity
		}
	}
	return SeverityInfo
}

// Finding is one thing the diagnosis found: the object and field it concerns and the fix.
type Finding struct {
	// Code is the kind of finding; Severity follows from it (Catalogue).
	Code     Code     `json:"code"`
	Severity Severity `json:"severity"`
	// Cluster is the cluster it concerns (fleet.Cluster.Dir: the name, or `<namespace>.<name>` when the name is not
	// unique), "" for the fleet as a whole.
	Cluster string `json:"cluster,omitempty"`
	// Object names the object to look at, e.g. `ClusterDeployment kcm-system/child-3`.
	Object string `json:"object,omitempty"`
	// Field is the field of Object to change or read, e.g. `metadata.labels`.
	Field string `json:"field,omitempty"`
	// Message says what is wrong, Fix what to do about it.
	Message string `json:"message"`
	Fix     string `json:"fix,omitempty"`
}

// newFinding returns a finding of code with its catalogue severity.
func newFinding(code Code, cluster, object, field, message, fix string) Finding {
	return Finding{Code: code, Severity: severityOf(code), Cluster: cluster, Object: object, Field: field,
		Message: message, Fix: fix}
}

// String formats f on one line: `<severity> <cluster>: <message> [<code>] (<object> <field>); fix: <fix>`.
func (f Finding) String() string {
	s := string(f.Severity) + " "
	if f.Cluster != "" {
		s += f.Cluster + ": "
	}
	s += f.Message + " [" + string(f.Code) + "]"
	if f.Object != "" || f.Field != "" {
		s += fmt.Sprintf(" (%s)", join(f.Object, f.Field))
	}
	if f.Fix != "" {
		s += "; fix: " + f.Fix
	}
	return s
}

func join(a, b string) string {
	switch {
	case a == "":
		return b
	case b == "":
		return a
	}
	return a + " " + b
}

// sortFindings orders findings worst first, then by cluster, code and message.
func sortFindings(fs []Finding) {
	sort.SliceStable(fs, func(i, j int) bool {
		a, b := fs[i], fs[j]
		if a.Severity.rank() != b.Severity.rank() {
			return a.Severity.rank() < b.Severity.rank()
		}
		if a.Cluster != b.Cluster {
			return a.Cluster < b.Cluster
		}
		if a.Code != b.Code {
			return a.Code < b.Code
		}
		return a.Message < b.Message
	})
}

// count returns how many of fs have severity sev.
func count(fs []Finding, sev Severity) int {
	n := 0
	for _, f := range fs {
		if f.Severity == sev {
			n++
		}
	}
	return n
}
