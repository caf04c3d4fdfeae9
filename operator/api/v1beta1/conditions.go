package v1beta1

// Condition types the operator reports (docs/operator.md, "Reporting"). Ready summarises the duty conditions of the
// operator's own kinds and is computed last (docs/style.md, "Reconcilers"). ClusterDeployments and regional
// ConfigMaps have no status the operator may write: their condition is published as Events only.
const (
	ConditionReady = "Ready"
	// ConditionPromxyConfigured is True when the PromxyServerGroup is part of a promxy config Secret that every
	// Running promxy pod reloaded.
	ConditionPromxyConfigured = "PromxyConfigured"
	// ConditionStorageConnected is True when the storage cluster carries the connection's args and mounts.
	ConditionStorageConnected = "StorageConnected"
	// ConditionKOFConfigured is True when the operator wrote everything a KOF ClusterDeployment needs.
	ConditionKOFConfigured = "KOFConfigured"
	// ConditionRegionalConfigured is True when a regional ConfigMap's admin VMUser, PromxyServerGroup and storage
	// connections are up to date.
	ConditionRegionalConfigured = "RegionalConfigured"
	// ConditionRulesMerged is True when a rule input ConfigMap was merged into the promxy and vmrules ConfigMaps
	// (published as Events on that ConfigMap).
	ConditionRulesMerged = "RulesMerged"
)

// Condition and event reasons, one list for every controller (events carry the reason of the condition they
// publish).
const (
	// ReasonSucceeded: the duty is done.
	ReasonSucceeded = "Succeeded"
	// ReasonConfigured: a ClusterDeployment's ConfigMaps and credentials are up to date.
	ReasonConfigured = "Configured"
	// ReasonRegionalConfigured: a regional ConfigMap's dependants are up to date.
	ReasonRegionalConfigured = "RegionalConfigured"
	// ReasonInvalidSpec: a field of the object is wrong; the message names it and the fix.
	ReasonInvalidSpec = "InvalidSpec"
	// ReasonInvalidConfig: a ClusterDeployment's spec.config cannot be read.
	ReasonInvalidConfig = "InvalidConfig"
	// ReasonInvalidAnnotation: a ClusterDeployment annotation is malformed; the message names the key, and what
	// the operator uses instead when it can go on.
	ReasonInvalidAnnotation = "InvalidAnnotation"
	// ReasonInvalidRegionalConfig: a regional ConfigMap holds data the operator cannot use.
	ReasonInvalidRegionalConfig = "InvalidRegionalConfig"
	// ReasonNoRegional: no regional cluster binds the child; the message names the labels to set.
	ReasonNoRegional = "NoRegionalCluster"
	// ReasonRegionalMisconfigured: the child's regional cluster exists but has no usable endpoints; the message
	// names the regional and its faulty key.
	ReasonRegionalMisconfigured = "RegionalMisconfigured"
	// ReasonOutsideWatchScope: an object the operator needs lives in a namespace outside KOF_WATCH_NAMESPACES.
	ReasonOutsideWatchScope = "OutsideWatchScope"
	// ReasonNotFound: a referenced object does not exist (yet).
	ReasonNotFound = "NotFound"
	// ReasonApplyFailed: the API server refused a write; retried with backoff.
	ReasonApplyFailed = "ApplyFailed"
	// ReasonReloadFailed: a promxy pod did not accept the reload; retried with backoff.
	ReasonReloadFailed = "ReloadFailed"
	// ReasonNoPromxyPods: no Running promxy pod matches the selector, so no pod loaded the config; retried.
	ReasonNoPromxyPods = "NoPromxyPods"
)

// Actions of the operator's events (events.k8s.io `action`), one per controller.
const (
	ActionConfigureCluster  = "ConfigureCluster"
	ActionConfigureRegional = "ConfigureRegional"
	ActionConfigurePromxy   = "ConfigurePromxy"
	ActionMergeRules        = "MergeRules"
	ActionConnectStorage    = "ConnectStorage"
)
