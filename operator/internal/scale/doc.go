// Package scale holds the operator's scale test and benchmark: 20 regional and 1,000 child ClusterDeployments
// reconciled by the ClusterDeployment and regional controllers against a real API server. It has no non-test code.
package scale
