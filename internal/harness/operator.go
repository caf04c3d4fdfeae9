package harness

import (
	"context"
	"fmt"
	"strings"

	appsv1 "k8s.io/api/apps/v1"

	"kof.dev/kof/internal/proc"
	kofv1 "kof.dev/kof/operator/api/v1beta1"
)

// OperatorPackage is the Go package of the kof-operator binary, relative to the module root.
const OperatorPackage = "./cmd/kof-operator"

// BuildOperator builds OperatorPackage of the module at root into dir (proc.BuildProgram: linked once per machine
// and change) and returns the binary's path. The error carries the compiler's output.
func BuildOperator(ctx context.Context, root, dir string) (string, error) {
	return proc.BuildProgram(ctx, root, OperatorPackage, dir)
}

// OperatorCommand returns the environment (`NAME=value`) and arguments of the kof-operator container of dep, the
// Deployment kof-mothership renders, adapted to a local process: the metrics and health listeners are turned off
// (`=0`, several processes share the loopback) and leader election is off (one process). Environment variables
// from a field reference to the pod's namespace or name get the Deployment's namespace and name. It returns an error
// naming the container or the variable it cannot reproduce outside a Pod.
func OperatorCommand(dep *appsv1.Deployment) (env, args []string, err error) {
	var found bool
	for _, c := range dep.Spec.Template.Spec.Containers {
		if c.Name != kofv1.OperatorContainer {
			continue
		}
		found = true
		for _, e := range c.Env {
			switch {
			case e.ValueFrom == nil:
				env = append(env, e.Name+"="+e.Value)
			case e.ValueFrom.FieldRef != nil && e.ValueFrom.FieldRef.FieldPath == "metadata.namespace":
				env = append(env, e.Name+"="+dep.Namespace)
			case e.ValueFrom.FieldRef != nil && e.ValueFrom.FieldRef.FieldPath == "metadata.name":
				env = append(env, e.Name+"="+dep.Name)
			default:
				return nil, nil, fmt.Errorf("Deployment %s/%s container %s: env %s: only values and pod name or "+
					"namespace field references can be reproduced outside a Pod", dep.Namespace, dep.Name,
					kofv1.OperatorContainer, e.Name)
			}
		}
		for _, a := range c.Args {
			args = append(args, localArg(a))
		}
	}
	if !found {
		return nil, nil, fmt.Errorf("Deployment %s/%s: no container %q", dep.Namespace, dep.Name, kofv1.OperatorContainer)
	}
	return env, args, nil
}

// localArg rewrites one operator flag for a local process (see OperatorCommand).
func localArg(a string) string {
	name, _, hasValue := strings.Cut(a, "=")
	switch {
	case hasValue && strings.HasSuffix(name, "-bind-address"):
		return name + "=0"
	case name == "--leader-elect":
		return "--leader-elect=false"
	}
	return a
}

// StartOperator starts binary with the environment and arguments OperatorCommand derives from dep, KUBECONFIG set to
// kubeconfig, and its output written to logPath. Only PATH, HOME and TMPDIR are inherited from this process. It
// returns an error when the Deployment cannot be reproduced or the process does not start.
func StartOperator(binary, kubeconfig string, dep *appsv1.Deployment, logPath string) (*Operator, error) {
	env, args, err := OperatorCommand(dep)
	if err != nil {
		return nil, err
	}
	return StartProcess("kof-operator", binary, kubeconfig, args, env, logPath)
}
