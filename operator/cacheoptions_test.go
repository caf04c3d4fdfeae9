package operator

import (
	"testing"

	corev1 "k8s.io/api/core/v1"
	"k8s.io/apimachinery/pkg/labels"

	"kof.dev/kof/operator/config"
	"kof.dev/kof/operator/internal/cacheconfig"
)

func TestCacheOptions(t *testing.T) {
	opts := cacheconfig.Options(config.Config{ReleaseNamespace: "kof", KCMNamespace: "kcm-system", WatchNamespaces: []string{"team-a"}})
	for _, ns := range []string{"kof", "kcm-system", "team-a"} {
		if _, ok := opts.DefaultNamespaces[ns]; !ok {
			t.Errorf("namespace %s not watched: %v", ns, opts.DefaultNamespaces)
		}
	}
	if len(opts.DefaultNamespaces) != 3 {
		t.Errorf("watched namespaces = %v, want 3", opts.DefaultNamespaces)
	}
	var secretSel labels.Selector
	for o, by := range opts.ByObject {
		if _, ok := o.(*corev1.Secret); ok {
			secretSel = by.Label
		}
	}
	if secretSel == nil || !secretSel.Matches(labels.Set{"app.kubernetes.io/managed-by": "kof-operator"}) ||
		secretSel.Matches(labels.Set{"app": "x"}) {
		t.Errorf("secret selector = %v, want managed-by=kof-operator", secretSel)
	}
	if all := cacheconfig.Options(config.Config{ReleaseNamespace: "kof"}); all.DefaultNamespaces != nil {
		t.Errorf("without KOF_WATCH_NAMESPACES every namespace is watched; got %v", all.DefaultNamespaces)
	}
}
