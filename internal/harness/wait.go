package harness

import (
	"context"
	"errors"
	"fmt"
	"os"
	"strconv"
	"strings"
	"time"

	kcmv1 "github.com/K0rdent/kcm/api/v1beta1"
	apierrors "k8s.io/apimachinery/pkg/api/errors"
	apimeta "k8s.io/apimachinery/pkg/api/meta"
	"k8s.io/apimachinery/pkg/apis/meta/v1/unstructured"
	"k8s.io/apimachinery/pkg/runtime"
	utilnet "k8s.io/apimachinery/pkg/util/net"
	"sigs.k8s.io/controller-runtime/pkg/client"

	"kof.dev/kof/operator/config"
	"kof.dev/kof/operator/outputs"
)

// ManagementCluster is the cluster name the fleet render gives the management cluster itself.
const ManagementCluster = "mgmt"

// waitPoll is how often WaitOperator looks for the operator's objects.
const waitPoll = 250 * time.Millisecond

// Expected is one object the kof-operator must make for a cluster (operator/outputs.Compute).
type Expected struct {
	// Cluster is the ClusterDeployment name (ManagementCluster for what the regionless management cluster gets).
	Cluster string
	// APIVersion and Kind are the object's type; Namespace and Name identify it.
	APIVersion, Kind, Namespace, Name string
	// Found reports whether the object existed when WaitOperator returned.
	Found bool
}

func (e Expected) String() string {
	if e.Namespace == "" {
		return fmt.Sprintf("%s %s", e.Kind, e.Name)
	}
	return fmt.Sprintf("%s %s/%s", e.Kind, e.Namespace, e.Name)
}

// Expectations returns every object the operator must make for the installation's live ClusterDeployments and
// ClusterTemplates: the objects operator/outputs.Compute names for the operator's environment (the same definition
// the operator and `kof render` use).
func (in *Installation) Expectations(ctx context.Context) ([]Expected, error) {
	env, err := in.operatorEnv()
	if err != nil {
		return nil, err
	}
	cfg, err := config.Load(func(k string) string { return env[k] })
	if err != nil {
		return nil, fmt.Errorf("kof-operator environment: %w", err)
	}
	live, err := in.LiveClusters(ctx)
	if err != nil {
		return nil, err
	}
	oin := outputs.Input{Config: cfg}
	for _, o := range live {
		var err error
		switch o.GetKind() {
		case KindClusterDeployment:
			var cd kcmv1.ClusterDeployment
			err = runtime.DefaultUnstructuredConverter.FromUnstructured(o.Object, &cd)
			oin.ClusterDeployments = append(oin.ClusterDeployments, cd)
		case KindClusterTemplate:
			var tpl kcmv1.ClusterTemplate
			err = runtime.DefaultUnstructuredConverter.FromUnstructured(o.Object, &tpl)
			oin.ClusterTemplates = append(oin.ClusterTemplates, tpl)
		}
		if err != nil {
			return nil, fmt.Errorf("read %s %s/%s: %w", o.GetKind(), o.GetNamespace(), o.GetName(), err)
		}
	}
	var out []Expected
	for _, o := range outputs.Compute(oin).Objects {
		e := Expected{Cluster: o.Cluster.Name, APIVersion: o.GetObjectKind().GroupVersionKind().GroupVersion().String(),
			Kind: o.GetObjectKind().GroupVersionKind().Kind, Namespace: o.GetNamespace(), Name: o.GetName()}
		if o.Management {
			e.Cluster = ManagementCluster
		}
		out = append(out, e)
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

// WaitOperator waits up to timeout until every object of Expectations exists and returns them with Found set. An
// answer of the API server that can still change (Retryable) is pending. It returns an error when the operator
// process ends while waiting (with the end of its log), when the API server fails in a way that cannot change, or
// when objects are still unreadable at the timeout; objects still missing at the timeout are no error: the caller
// reports them per cluster.
func (in *Installation) WaitOperator(ctx context.Context, timeout time.Duration) ([]Expected, error) {
	deadline := time.Now().Add(timeout)
	var want []Expected
	var err error
	for {
		if want, err = in.Expectations(ctx); err == nil {
			break
		}
		if !Retryable(err) || time.Now().After(deadline) {
			return nil, err
		}
		time.Sleep(waitPoll)
	}
	for {
		missing := 0
		var unreadable []string
		for i := range want {
			if want[i].Found {
				continue
			}
			if want[i].Found, err = in.find(ctx, &want[i]); err != nil {
				if !Retryable(err) {
					return want, err
				}
				unreadable = append(unreadable, err.Error())
			}
			if !want[i].Found {
				missing++
			}
		}
		if missing == 0 {
			return want, nil
		}
		if in.Operator != nil { // nil on a node: the Deployment's pods, which the kubelet restarts
			if exitErr, ended := in.Operator.Exited(); ended {
				return want, fmt.Errorf("kof-operator ended while KOF waited for its objects: %v\n%s", exitErr,
					tail(in.Operator.LogPath, 20))
			}
		}
		if time.Now().After(deadline) {
			if len(unreadable) > 0 {
				return want, fmt.Errorf("kof-operator objects still unreadable after %s:\n%s", timeout,
					strings.Join(unreadable, "\n"))
			}
			return want, nil
		}
		select {
		case <-ctx.Done():
			return want, ctx.Err()
		case <-time.After(waitPoll):
		}
	}
}

// find reports whether e exists on the API server.
func (in *Installation) find(ctx context.Context, e *Expected) (bool, error) {
	u := &unstructured.Unstructured{}
	u.SetAPIVersion(e.APIVersion)
	u.SetKind(e.Kind)
	err := in.Session.ControlPlane.Client.Get(ctx, client.ObjectKey{Namespace: e.Namespace, Name: e.Name}, u)
	if apierrors.IsNotFound(err) {
		return false, nil
	}
	if err != nil {
		return false, fmt.Errorf("get %s: %w", e, err)
	}
	return true, nil
}

// Retryable reports whether err is a state that can still change while a wait runs: an API server timeout, a 429,
// 503 or 500 answer, a conflict, a kind not served yet (right after a CRD is installed), a refused, reset or timed-out
// connection. A wait treats it as pending until its deadline.
func Retryable(err error) bool {
	return err != nil && (apierrors.IsTimeout(err) || apierrors.IsServerTimeout(err) ||
		apierrors.IsTooManyRequests(err) || apierrors.IsServiceUnavailable(err) || apierrors.IsInternalError(err) ||
		apierrors.IsConflict(err) || apimeta.IsNoMatchError(err) || utilnet.IsConnectionRefused(err) ||
		utilnet.IsConnectionReset(err) || utilnet.IsProbableEOF(err) || utilnet.IsTimeout(err) ||
		errors.Is(err, context.DeadlineExceeded))
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
