// Package sveltos evaluates MultiClusterService service values offline, the way Sveltos evaluates them on the
// management cluster (layer 2 of KOF). KCM copies each service's `values` string into a Sveltos Profile; Sveltos'
// addon-controller then executes it as a Go template once per matching cluster. This package reproduces that
// step with the libraries Sveltos itself uses, so charts and `kof render` can show what every cluster receives.
//
// # Engine
//
// Templates run on text/template with missingkey=error, libsveltos' own function map (lib/funcmap: sprig v3.3.0
// plus toYaml, fromYaml, fromYamlArray, toJson, fromJson, fromJsonArray, toToml, fromToml) and Sveltos'
// resource functions over .MgmtResources (getResource, copy, getField, setField, removeField, chainSetField,
// chainRemoveField). The data is Data: exactly .Cluster, .InfrastructureProvider, .KubeadmControlPlane and
// .MgmtResources. Helm's include, tpl, required and lookup do not exist; neither do .Values or .Release.
// For determinism, env, expandenv and getHostByName read Environment; now, the date functions, rand*,
// randInt, randBytes, shuffle, uuidv4 and gen* are pinned (see Environment; gen* make Ed25519 keys).
//
// templateResourceRefs are resolved from a set of management-cluster objects: names and namespaces are
// html/templates over {Cluster, ClusterNamespace, ClusterName}, an empty namespace is the cluster's, a missing
// optional object is skipped and a missing required one fails the cluster; watchFields keeps only those paths
// and ignoreStatusChanges drops status, resourceVersion and managedFields.
//
// # The double pass
//
// Sveltos v1.0.1 to v1.15 (the releases KCM ships) first YAML-marshals every field of a helm chart entry,
// executes the YAML text as a template and unmarshals it, then executes `values` once more. DoublePass (the
// default Mode) reproduces this, with its consequences: multi-line action output is shifted 2 columns left or
// dropped; a trailing space, a tab at line start or a CR turn the text into a double-quoted scalar in which a
// "..." inside an action no longer parses; a single-line text becomes a quoted scalar; {{ "{{" }} escapes are
// consumed by the first pass; valuesFrom names are executed against the values data, where .ClusterName does
// not exist. SinglePass executes values once and templates only the chart identity fields in the first pass
// (the upstream fix, addon-controller pull request 1956). Lint reports these hazards in a values text without
// executing it; LintMultiClusterService lints every service of a rendered MultiClusterService. The one
// multi-line form that survives both modes is flow YAML on one line: {{ x | toJson }}.
//
// After instantiation the text must be a YAML mapping; valuesFrom ConfigMaps and Secrets are merged over it
// (MergeValues: maps merged, lists replaced), plain ones first, then those annotated TemplateAnnotation,
// which are instantiated once.
//
// InstantiateContent gives the objects Sveltos deploys from a ConfigMap or Secret of plain resources (a policyRef;
// a KCM ServiceTemplate with spec.resources): each key instantiated once when the object carries
// TemplateAnnotation (resource templates have no double pass), then split into YAML documents.
//
// Errors are *Error values naming the MCS, the service, the cluster, the stage and the template line.
// Instantiate and InstantiateProfile keep no state between calls and never modify their input, so callers may
// run them concurrently.
//
// # Known differences from a live Sveltos
//
//   - Instantiate runs one service in isolation; InstantiateProfile runs all services of a profile and shares
//     .MgmtResources and the pass-1 cluster objects between them as Sveltos does, so use it when a service's
//     values mutate referenced objects with setField, removeField or chainSetField.
//   - A CAPI Cluster's infrastructure and control-plane objects are looked up in Input.Objects; when absent the
//     fields stay nil, where Sveltos would fail the cluster.
//   - .Cluster is the object given (see ClusterFromDeployment), not a typed round trip, so zero-valued fields a
//     typed CAPI Cluster would carry (creationTimestamp: null, empty status) are absent.
//   - gen* make Ed25519 keys whatever type is asked for; bcrypt, htpasswd and encryptAES keep sprig's random
//     salts and IVs and are therefore not deterministic.
//
// # Example
//
//	cd := ... // a ClusterDeployment read from YAML
//	cluster, err := sveltos.ClusterFromDeployment(cd, sveltos.KindCAPI)
//	if err != nil {
//		return err
//	}
//	res, err := sveltos.Instantiate(sveltos.Input{
//		Profile: "kof-child-cluster",
//		Service: "kof-collectors",
//		Cluster: cluster,
//		Values:  "clusterName: {{ .Cluster.metadata.name }}\n",
//		TemplateResourceRefs: []sveltos.TemplateResourceRef{{
//			Identifier: "ChildConfig",
//			Resource:   corev1.ObjectReference{APIVersion: "v1", Kind: "ConfigMap", Name: "kof-cluster-config-{{ .ClusterName }}"},
//		}},
//		Objects: mgmtObjects, // []*unstructured.Unstructured on the management cluster
//	})
//	// res.Values == map[string]any{"clusterName": "child-1"}; res.Text is the instantiated text.
//
// Sources: projectsveltos/addon-controller v1.9.0 controllers/template_instantiation.go, handlers_helm.go,
// templateresourcedef_utils.go; projectsveltos/libsveltos v1.9.0 lib/funcmap and lib/template; k0rdent/kcm
// v1.10.0 (how ClusterDeployments become clusters).
package sveltos
