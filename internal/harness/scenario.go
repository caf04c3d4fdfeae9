package harness

import (
	"errors"
	"fmt"
	"os"
	"path/filepath"

	"k8s.io/apimachinery/pkg/apis/meta/v1/unstructured"

	"kof.dev/kof/chartlib/manifest"
)

// Files of a scenario folder (tests/scenarios README: values.yaml always; clusters.yaml and namespace.yaml when the
// scenario brings its own).
const (
	ScenarioValuesFile    = "values.yaml"
	ScenarioClustersFile  = "clusters.yaml"
	ScenarioNamespaceFile = "namespace.yaml"
	// StandardClustersFile, in the scenarios folder itself, holds the clusters of scenarios without clusters.yaml.
	StandardClustersFile = "clusters-standard.yaml"
)

// Kinds of the scenario's management-cluster inputs.
const (
	KindClusterDeployment = "ClusterDeployment"
	KindClusterTemplate   = "ClusterTemplate"
)

// Scenario is one user situation: the umbrella values, the `kof` namespace as it exists on the management cluster
// and the ClusterDeployments and ClusterTemplates KCM holds there.
type Scenario struct {
	// Name is the folder name, e.g. `01-regional-child`.
	Name string
	// ValuesFile is the path of the scenario's umbrella values.
	ValuesFile string
	// Namespace is the `kof` namespace object (namespace.yaml), nil when the scenario has none.
	Namespace *unstructured.Unstructured
	// ClustersFile is the file Clusters came from.
	ClustersFile string
	// Clusters are the ClusterTemplates and ClusterDeployments, ClusterTemplates first.
	Clusters []*unstructured.Unstructured
}

// LoadScenario reads the scenario name from the folder scenariosDir (the project's tests/scenarios/testdata): its
// values.yaml, namespace.yaml when present, and clusters.yaml or else scenariosDir/clusters-standard.yaml. It returns
// an error naming the missing or unreadable file; a clusters file without any ClusterDeployment is an error too.
func LoadScenario(scenariosDir, name string) (*Scenario, error) {
	dir := filepath.Join(scenariosDir, name)
	sc := &Scenario{Name: name, ValuesFile: filepath.Join(dir, ScenarioValuesFile)}
	if _, err := os.Stat(sc.ValuesFile); err != nil {
		return nil, fmt.Errorf("scenario %q: %w; pick a folder of %s", name, err, scenariosDir)
	}
	nsPath := filepath.Join(dir, ScenarioNamespaceFile)
	if objs, err := readObjects(nsPath); err == nil {
		if len(objs) != 1 || objs[0].GetKind() != "Namespace" {
			return nil, fmt.Errorf("scenario %q: %s must hold exactly one Namespace", name, nsPath)
		}
		sc.Namespace = objs[0]
	} else if !errors.Is(err, os.ErrNotExist) {
		return nil, fmt.Errorf("scenario %q: %w", name, err)
	}
	sc.ClustersFile = filepath.Join(dir, ScenarioClustersFile)
	if _, err := os.Stat(sc.ClustersFile); errors.Is(err, os.ErrNotExist) {
		sc.ClustersFile = filepath.Join(scenariosDir, StandardClustersFile)
	}
	objs, err := readObjects(sc.ClustersFile)
	if err != nil {
		return nil, fmt.Errorf("scenario %q: %w", name, err)
	}
	var templates, deployments []*unstructured.Unstructured
	for _, o := range objs {
		if o.GetKind() == KindClusterTemplate {
			templates = append(templates, o)
		} else {
			deployments = append(deployments, o)
		}
	}
	sc.Clusters = append(templates, deployments...)
	if countKind(sc.Clusters, KindClusterDeployment) == 0 {
		return nil, fmt.Errorf("scenario %q: %s holds no ClusterDeployment", name, sc.ClustersFile)
	}
	return sc, nil
}

// readObjects parses the YAML stream at path.
func readObjects(path string) ([]*unstructured.Unstructured, error) {
	data, err := os.ReadFile(path)
	if err != nil {
		return nil, err
	}
	docs, err := manifest.ParseDocuments(path, data)
	if err != nil {
		return nil, fmt.Errorf("parse %s: %w", path, err)
	}
	out := make([]*unstructured.Unstructured, 0, len(docs))
	for _, d := range docs {
		out = append(out, d.Unstructured)
	}
	return out, nil
}

func countKind(objs []*unstructured.Unstructured, kind string) int {
	n := 0
	for _, o := range objs {
		if o.GetKind() == kind {
			n++
		}
	}
	return n
}
