package testenv

import (
	"kof.dev/kof/operator/config"
)

// OperatorConfig returns the operator configuration the controller tests run with: the shipped one
// (config.Shipped, operator/config/manager/deployment.yaml: the environment the kof-mothership chart renders with
// its default values, every default of operator/config), so the tests make the objects a real install makes (the
// MultiClusterService names the propagation MCSs depend on, the storage URLs, the promxy Secret). Start refuses to
// start a control plane when that configuration does not load, so no test runs with the zero Config returned then.
func OperatorConfig() config.Config {
	cfg, err := config.Shipped()
	if err != nil {
		return config.Config{}
	}
	return cfg
}
