// Package scale holds the operator's scale tests and benchmarks against a real API server: fleets of regional and
// child ClusterDeployments (200 to 10,000 children, 20 or 100 regionals) next to the chart's VLClusters and
// VTCluster, reconciled by the operator as kof-mothership ships it (the program of operator/internal/scale/counted,
// run with the args and env the chart renders for the operator container), measured against the floor of a client
// applying the same objects. It has no non-test code.
package scale
