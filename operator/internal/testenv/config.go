package testenv

import (
	"k8s.io/apimachinery/pkg/labels"

	"kof.dev/kof/operator/config"
)

// OperatorConfig returns the operator configuration the controller tests run with: the kof-mothership release in
// `kof`, KCM in `kcm-system`, auto upgrade on, regional (not regionless) mode, the multilevel VL/VT cluster names
// and storage URLs the chart's defaults give, and a promxy pod selector matching every pod.
func OperatorConfig() config.Config {
	return config.Config{
		ReleaseNamespace: "kof", ReleaseName: "kof-mothership", AutoUpgrade: true,
		PropagationTemplate: "kof-propagation-2-0-0", KCMNamespace: "kcm-system", RegionlessClusterName: "mothership",
		VTClusterName: "kof-traces", VLClusterName: "kof-logs", VLAuditClusterName: "kof-logs-audit",
		Storage: config.StorageURLs{
			VMInsert: "http://vminsert-cluster:8480/", VMSelect: "http://vmselect-cluster:8481/",
			VLInsert: "http://vlinsert:9481/", VLSelect: "http://vlselect:9471/",
			VLAuditInsert: "http://vlinsert-audit:9481/", VLAuditSelect: "http://vlselect-audit:9471/",
			VTInsert: "http://vtinsert:10481/", VTSelect: "http://vtselect:10471/",
		},
		PromxyPodSelector: labels.Everything(), PromxySecretName: "kof-mothership-promxy-config",
	}
}
