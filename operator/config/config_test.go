package config

import (
	"strings"
	"testing"

	"github.com/google/go-cmp/cmp"
	"k8s.io/apimachinery/pkg/labels"
)

// validEnv returns a complete environment as the kof-mothership chart sets it.
func validEnv() map[string]string {
	return map[string]string{
		EnvReleaseNamespace:    "kof",
		EnvReleaseName:         "kof-mothership",
		EnvPropagationTemplate: "kof-propagation-2-0-0",
		EnvVTClusterName:       "kof-traces",
		EnvVLClusterName:       "kof-logs",
		EnvVMInsertURL:         "http://vminsert-cluster:8480",
		EnvVMSelectURL:         "http://vmselect-cluster:8481",
		EnvVLInsertURL:         "http://vlinsert-kof-logs:9481",
		EnvVLSelectURL:         "http://vlselect-kof-logs:9471",
		EnvVLAuditInsertURL:    "http://vlinsert-kof-audit:9481",
		EnvVLAuditSelectURL:    "http://vlselect-kof-audit:9471",
		EnvVTInsertURL:         "http://vtinsert-kof-traces:10481",
		EnvVTSelectURL:         "http://vtselect-kof-traces:10471",
		EnvPromxyPodSelector:   "app.kubernetes.io/name=promxy",
		EnvPromxySecretName:    "kof-mothership-promxy-config",
		EnvWatchNamespaces:     " kcm-system, kof ,",
	}
}

func load(env map[string]string) (Config, error) {
	return Load(func(k string) string { return env[k] })
}

func TestLoadValid(t *testing.T) {
	c, err := load(validEnv())
	if err != nil {
		t.Fatalf("Load: %v", err)
	}
	if c.ReleaseNamespace != "kof" || c.Regionless || !c.AutoUpgrade {
		t.Errorf("unexpected basics: %+v", c)
	}
	if c.VLAuditClusterName != "kof-logs-audit" || c.PromxyRulesConfigMap != "kof-mothership-promxy-rules" {
		t.Errorf("defaults: audit %q rules %q", c.VLAuditClusterName, c.PromxyRulesConfigMap)
	}
	if c.RegionlessClusterName != "mothership" || c.KCMNamespace != "kcm-system" || c.ChildMCS != "kof-child-cluster" {
		t.Errorf("defaults: %q %q %q", c.RegionlessClusterName, c.KCMNamespace, c.ChildMCS)
	}
	if diff := cmp.Diff([]string{"kcm-system", "kof"}, c.WatchNamespaces); diff != "" {
		t.Errorf("WatchNamespaces (-want +got):\n%s", diff)
	}
	if !c.PromxyPodSelector.Matches(labels.Set{"app.kubernetes.io/name": "promxy"}) ||
		c.PromxyPodSelector.Matches(labels.Set{"app": "other"}) {
		t.Errorf("PromxyPodSelector = %v", c.PromxyPodSelector)
	}
	if c.Storage.VTSelect != "http://vtselect-kof-traces:10471" {
		t.Errorf("Storage.VTSelect = %q", c.Storage.VTSelect)
	}
}

func TestLoadErrors(t *testing.T) {
	tests := []struct {
		name  string
		edit  func(map[string]string)
		wants []string
	}{
		{name: "missing required", edit: func(e map[string]string) { delete(e, EnvReleaseName); delete(e, EnvVTClusterName) },
			wants: []string{"environment RELEASE_NAME: required", "environment KOF_VT_CLUSTER_NAME: required"}},
		{name: "regionless without domain", edit: func(e map[string]string) { e[EnvRegionlessEnabled] = "true" },
			wants: []string{"environment KOF_REGIONLESS_DOMAIN: required when KOF_REGIONLESS_ENABLED is true"}},
		{name: "bad bool", edit: func(e map[string]string) { e[EnvAutoUpgrade] = "yes please" },
			wants: []string{`environment KOF_AUTO_UPGRADE: "yes please" is not a boolean`}},
		{name: "no version without auto upgrade", edit: func(e map[string]string) { e[EnvAutoUpgrade] = "false" },
			wants: []string{"environment KOF_VERSION: required when KOF_AUTO_UPGRADE is false"}},
		{name: "bad url", edit: func(e map[string]string) { e[EnvVMSelectURL] = "vmselect:8481" },
			wants: []string{"environment KOF_VM_SELECT_URL: invalid URL"}},
		{name: "bad selector", edit: func(e map[string]string) { e[EnvPromxyPodSelector] = "a=b=c" },
			wants: []string{"environment KOF_PROMXY_POD_SELECTOR: invalid label selector"}},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			env := validEnv()
			tt.edit(env)
			_, err := load(env)
			if err == nil {
				t.Fatal("Load: want error")
			}
			for _, w := range tt.wants {
				if !strings.Contains(err.Error(), w) {
					t.Errorf("error %q does not contain %q", err, w)
				}
			}
		})
	}
}

func TestLoadRegionless(t *testing.T) {
	env := validEnv()
	env[EnvRegionlessEnabled] = "true"
	env[EnvRegionlessDomain] = "mothership.kof.example.com"
	env[EnvRegionlessClusterName] = "mgmt"
	c, err := load(env)
	if err != nil {
		t.Fatal(err)
	}
	if !c.Regionless || c.RegionlessDomain != "mothership.kof.example.com" || c.RegionlessClusterName != "mgmt" {
		t.Errorf("regionless config = %+v", c)
	}
}

// TestEnvironmentNames pins the variable names to those of the KOF implementation guide (users and tools set them
// by these names).
func TestEnvironmentNames(t *testing.T) {
	got := []string{EnvReleaseName, EnvReleaseNamespace, EnvPropagationTemplate, EnvRegionalMCS, EnvChildMCS,
		EnvVMInsertURL, EnvVMSelectURL, EnvVLInsertURL, EnvVLSelectURL, EnvVLAuditInsertURL, EnvVLAuditSelectURL,
		EnvVTInsertURL, EnvVTSelectURL}
	want := []string{"RELEASE_NAME", "RELEASE_NAMESPACE", "KOF_PROPAGATION_TEMPLATE", "KOF_REGIONAL_CLUSTER_MCS_NAME",
		"KOF_CHILD_CLUSTER_MCS_NAME", "KOF_VM_INSERT_URL", "KOF_VM_SELECT_URL", "KOF_VL_INSERT_URL", "KOF_VL_SELECT_URL",
		"KOF_VL_AUDIT_INSERT_URL", "KOF_VL_AUDIT_SELECT_URL", "KOF_VT_INSERT_URL", "KOF_VT_SELECT_URL"}
	if d := cmp.Diff(want, got); d != "" {
		t.Errorf("environment names (-guide +operator):\n%s", d)
	}
}

func TestWatchScope(t *testing.T) {
	c, err := load(validEnv())
	if err != nil {
		t.Fatal(err)
	}
	if d := cmp.Diff([]string{"kcm-system", "kof"}, c.WatchScope()); d != "" {
		t.Errorf("scope (-want +got):\n%s", d)
	}
	c.WatchNamespaces = []string{"team-a"}
	if !c.Watches("team-a") || !c.Watches("kof") || c.Watches("team-b") {
		t.Errorf("Watches with scope %v: team-a %v, kof %v, team-b %v", c.WatchScope(), c.Watches("team-a"),
			c.Watches("kof"), c.Watches("team-b"))
	}
	err = c.OutsideWatchScope("regional cluster team-b/r1", "team-b")
	want := "regional cluster team-b/r1: namespace team-b is outside KOF_WATCH_NAMESPACES (kcm-system,kof,team-a); " +
		"add it to the kof-mothership value operator.watchNamespaces"
	if err == nil || err.Error() != want {
		t.Errorf("OutsideWatchScope = %v, want %q", err, want)
	}
	c.WatchNamespaces = nil
	if c.WatchScope() != nil || !c.Watches("anything") || c.OutsideWatchScope("x", "anything") != nil {
		t.Errorf("empty KOF_WATCH_NAMESPACES must watch every namespace")
	}
}

// TestShipped: the shipped operator configuration loads, and every optional setting has its default: the MCS names
// the propagation MultiClusterServices depend on are never empty (regression: the controller tests ran with empty
// names and made MCSs with `dependsOn: [""]`).
func TestShipped(t *testing.T) {
	c, err := Shipped()
	if err != nil {
		t.Fatal(err)
	}
	for name, v := range map[string]string{EnvRegionalMCS: c.RegionalMCS, EnvChildMCS: c.ChildMCS,
		EnvIstioRegionalMCS: c.IstioRegionalMCS, EnvIstioChildMCS: c.IstioChildMCS, EnvKCMNamespace: c.KCMNamespace,
		EnvPropagationTemplate: c.PropagationTemplate, EnvVLAuditClusterName: c.VLAuditClusterName} {
		if v == "" {
			t.Errorf("shipped %s is empty", name)
		}
	}
	if c.RegionalMCS != DefaultRegionalMCS || c.ChildMCS != DefaultChildMCS {
		t.Errorf("shipped MCS names %q, %q; want the chart names %q, %q", c.RegionalMCS, c.ChildMCS,
			DefaultRegionalMCS, DefaultChildMCS)
	}
}
