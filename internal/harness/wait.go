package harness

import (
	"context"
	"fmt"
	"os"
	"strconv"
	"strings"
	"time"

	corev1 "k8s.io/api/core/v1"
	apierrors "k8s.io/apimachinery/pkg/api/errors"
	"sigs.k8s.io/controller-runtime/pkg/client"

	kofv1 "kof.dev/kof/operator/api/v1beta1"
	"kof.dev/kof/operator/config"
	"kof.dev/kof/operator/names"
)

// ManagementCluster is the cluster name the fleet render gives the management cluster itself.
const ManagementCluster = "mgmt"

// waitPoll is how often WaitOperator looks for the operator's objects.
const waitPoll = 250 * time.Millisecond

// Expected is one object the kof-operator must make for a cluster (docs/contract.md, "Objects the operator writes").
type Expected struct {
	// Cluster is the ClusterDeployment name (ManagementCluster for the regionless ConfigMap).
	Cluster string
	// Kind is ConfigMap or Secret; Namespace and Name identify the object.
	Kind, Namespace, Name string
	// Found reports whether the object existed when WaitOperator returned.
	Found bool
}

func (e Expected) String() string { return fmt.Sprintf("%s %s/%s", e.Kind, e.Namespace, e.Name) }

// Expectations returns what the operator must make for the installation's live ClusterDeployments: for a regional
// cluster its ConfigMap `kof-<c>` (not in regionless mode, where the management cluster's `kof-<mothership>` in the
// KCM namespace stands for it), for a child its ConfigMap `kof-cluster-config-<c>` and its VMUser credentials
// Secret `kof-vmuser-creds-<base>`. Names come from operator/names; the mode from the operator's environment.
func (in *Installation) Expectations(ctx context.Context) ([]Expected, error) {
	env, err := in.operatorEnv()
	if err != nil {
		return nil, err
	}
	cfg, err := config.Load(func(k string) string { return env[k] })
	if err != nil {
		return nil, fmt.Errorf("kof-operator environment: %w", err)
	}
	cds, err := in.LiveClusters(ctx)
	if err != nil {
		return nil, err
	}
	var out []Expected
	if cfg.Regionless {
		out = append(out, Expected{Cluster: ManagementCluster, Kind: "ConfigMap", Namespace: cfg.KCMNamespace,
			Name: names.RegionalConfigMap(cfg.RegionlessClusterName)})
	}
	for _, cd := range cds {
		if cd.GetKind() != KindClusterDeployment {
			continue
		}
		name, ns := cd.GetName(), cd.GetNamespace()
		switch cd.GetLabels()[kofv1.ClusterRoleLabel] {
		case kofv1.RoleRegional:
			if !cfg.Regionless {
				out = append(out, Expected{Cluster: name, Kind: "ConfigMap", Namespace: ns,
					Name: names.RegionalConfigMap(name)})
			}
		case kofv1.RoleChild:
			out = append(out,
				Expected{Cluster: name, Kind: "ConfigMap", Namespace: ns, Name: names.ChildConfigMap(name)},
				Expected{Cluster: name, Kind: "Secret", Name: names.VMUserSecret(names.ChildVMUserBase(ns, name))})
		}
	}
	return out, nil
}

func (in *Installation) operatorEnv() (map[string]string, error) {
	if in.operatorCmd == nil {
		return nil, fmt.Errorf("the kof-operator is not running")
	}
	env := map[string]string{}
	for _, kv := range in.operatorCmd {
		if k, v, ok := strings.Cut(kv, "="); ok && !strings.HasPrefix(k, "-") {
			env[k] = v
		}
	}
	return env, nil
}

// WaitOperator waits up to timeout until every object of Expectations exists and returns them with Found set. A
// Secret's namespace is where it was found (any namespace). It returns an error when the operator process ends
// while waiting (with the end of its log) or the API server fails; objects still missing at the timeout are no
// error: the caller reports them per cluster.
func (in *Installation) WaitOperator(ctx context.Context, timeout time.Duration) ([]Expected, error) {
	want, err := in.Expectations(ctx)
	if err != nil {
		return nil, err
	}
	deadline := time.Now().Add(timeout)
	for {
		missing := 0
		for i := range want {
			if want[i].Found {
				continue
			}
			if want[i].Found, err = in.find(ctx, &want[i]); err != nil {
				return want, err
			}
			if !want[i].Found {
				missing++
			}
		}
		if missing == 0 || time.Now().After(deadline) {
			return want, nil
		}
		if exitErr, ended := in.Operator.Exited(); ended {
			return want, fmt.Errorf("kof-operator ended while KOF waited for its objects: %v\n%s", exitErr,
				tail(in.Operator.LogPath, 20))
		}
		select {
		case <-ctx.Done():
			return want, ctx.Err()
		case <-time.After(waitPoll):
		}
	}
}

// find looks e up; a Secret without namespace is searched in every namespace by name among the operator's Secrets.
func (in *Installation) find(ctx context.Context, e *Expected) (bool, error) {
	c := in.Session.ControlPlane.Client
	if e.Kind == "Secret" && e.Namespace == "" {
		var list corev1.SecretList
		if err := c.List(ctx, &list, client.MatchingLabels{kofv1.ManagedByLabel: kofv1.ManagedBy}); err != nil {
			return false, fmt.Errorf("list operator Secrets: %w", err)
		}
		for _, s := range list.Items {
			if s.Name == e.Name {
				e.Namespace = s.Namespace
				return true, nil
			}
		}
		return false, nil
	}
	var obj client.Object = &corev1.ConfigMap{}
	if e.Kind == "Secret" {
		obj = &corev1.Secret{}
	}
	err := c.Get(ctx, client.ObjectKey{Namespace: e.Namespace, Name: e.Name}, obj)
	if apierrors.IsNotFound(err) {
		return false, nil
	}
	if err != nil {
		return false, fmt.Errorf("get %s: %w", e, err)
	}
	return true, nil
}

// tail returns the last n lines of the file at path, or a note that it cannot be read.
func tail(path string, n int) string {
	data, err := os.ReadFile(path)
	if err != nil {
		return "(log unreadable: " + err.Error() + ")"
	}
	lines := strings.Split(strings.TrimRight(string(data), "\n"), "\n")
	if len(lines) > n {
		lines = lines[len(lines)-n:]
	}
	return strings.Join(lines, "\n") + "\n(last " + strconv.Itoa(len(lines)) + " lines of " + path + ")"
}
