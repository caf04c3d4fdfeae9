// Package fleet renders what every cluster of a KOF fleet receives, offline: the `kof render` pipeline and the
// harness of the scenario tests.
//
// # Pipeline
//
// Render follows the data flow of the KOF design ("Data flow of kof render"):
//
//  1. layer 1: the umbrella chart `kof` with the user's values, the `kof` namespace object as its lookup fixture
//     → Flux HelmRepositories, HelmCharts and HelmReleases;
//  2. every HelmRelease whose HelmChart names a local KOF chart (`<chart>/Chart.yaml` exists under
//     Options.ChartsDir, else in Options.Charts) is rendered with the release's values, name and target namespace,
//     with the management cluster's APIs (ManagementAPIVersions) in .Capabilities → the management cluster's
//     objects (ServiceTemplates, MultiClusterServices, the kof-operator Deployment, PrometheusRules, ...); the
//     HelmReleases a local release renders (kof-operators' operators) are releases of the management cluster too,
//     after it;
//  3. the KOF operator's outputs are computed by the operator's own definition, operator/outputs.Compute, from the
//     environment kof-mothership gives the kof-operator Deployment: regional and child ConfigMaps, vmrules
//     ConfigMaps, VMUser bundles (credential Secrets with offline placeholder passwords, VMUsers, propagation
//     MultiClusterServices), PromxyServerGroups, VMStorageConnections and KCM region propagation MCSs, with the
//     problems the operator would report per cluster (reason and message, e.g. a namespace outside
//     KOF_WATCH_NAMESPACES). Options.ManagementObjects replaces this step with objects read from a live
//     management cluster;
//  4. every MultiClusterService is matched against every ClusterDeployment (and, for self-management, the
//     management cluster as the SveltosCluster mgmt/mgmt labelled `k0rdent.mirantis.com/management-cluster: "true"`);
//     for each match the annotations the service's values text reads are checked by their kind (Annotations: URL,
//     DNS-1123 name, e-mail, duration, mapping; a values annotation also against the chart's schema, with a
//     did-you-mean), a bad one failing that service alone with the cluster, the annotation and an example; then
//     every service's values are instantiated by chartlib/sveltos (layer 2), valuesFrom merged, and
//     the service's chart rendered when its ServiceTemplate names a local KOF chart; a third-party service is
//     recorded with its repository, chart, version and values; a ServiceTemplate of plain resources (spec.resources
//     with a local ConfigMap or Secret) gives the objects Sveltos deploys from it (sveltos.InstantiateContent);
//  5. every rendered object is checked by Options.Validator (chartlib/validate), and every cluster by the generic
//     checks (Fleet.Check: one-owner, installable, waits, upgrades, secrets); Write stores
//     `<dir>/<cluster>/<service>/manifest.yaml` and `values.yaml`; Summary prints one line per cluster, then every
//     problem and finding with its object and fix.
//
// A failure of steps 1–2 fails the whole render (nothing is partially rendered). A failure that concerns one
// cluster (a malformed annotation, a child without a regional cluster, a template error, an invalid object) is
// recorded on that cluster and the others still render.
//
// # Known differences from a live management cluster
//
//   - Credential Secrets carry an offline placeholder password (OfflinePassword). As the operator does, no
//     credentials are made for the management cluster itself in M2R mode. The operator-made MultiClusterServices
//     are shown among the management cluster's objects; layer 2 does not evaluate them.
//   - MultiClusterService spec.dependsOn and service dependsOn only order the output and the installable check;
//     nothing waits.
//   - A ClusterDeployment is shown to Sveltos as a CAPI Cluster, or as a SveltosCluster when its ClusterTemplate is
//     KCM's adopted-cluster template (name or chart starting with `adopted-cluster`).
//
// Sources: the KOF design ("Data flow of kof render"), the KOF layer-2 notes ("KCM mapping"), k0rdent/kcm
// v1.10.0 api/v1beta1 (MultiClusterService, ServiceTemplate), fluxcd helm-controller v2 and source-controller v1.
package fleet
