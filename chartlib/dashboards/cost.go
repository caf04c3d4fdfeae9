package dashboards

import "github.com/grafana/grafana-foundation-sdk/go/dashboard"

// Cost expressions from OpenCost's metrics (each cluster's OpenCost prices its own nodes; promxy on the management
// cluster gives the fleet view). CPU and memory allocation times the node's hourly price; memory in GiB.
const (
	cpuCost = `sum by (cluster, namespace, pod) (container_cpu_allocation{cluster=~"$cluster"} * on (cluster, node) group_left max by (cluster, node) (node_cpu_hourly_cost{cluster=~"$cluster"}))`
	ramCost = `sum by (cluster, namespace, pod) (container_memory_allocation_bytes{cluster=~"$cluster"} / 1073741824 * on (cluster, node) group_left max by (cluster, node) (node_ram_hourly_cost{cluster=~"$cluster"}))`
	podCost = `(` + cpuCost + ` + ` + ramCost + `)`
)

// cost is "KOF / Cost": hourly cost per cluster, namespace and workload, and the idle cost (nodes paid for but not
// allocated), from OpenCost.
func cost() *dashboard.DashboardBuilder {
	return newBoard("cost", "KOF / Cost",
		"Hourly cost per cluster, namespace and workload, and idle cost, from each cluster's OpenCost.", "node_total_hourly_cost").
		WithRow(row("Fleet")).
		WithPanel(statValue("Fleet hourly cost", "Sum of the hourly price of every node of the selected clusters.", "currencyUSD",
			target{`sum(node_total_hourly_cost{cluster=~"$cluster"})`, ""})).
		WithPanel(statValue("Fleet monthly estimate", "Hourly node cost times 730 hours.", "currencyUSD",
			target{`sum(node_total_hourly_cost{cluster=~"$cluster"}) * 730`, ""})).
		WithPanel(statValue("Idle hourly cost", "Node cost not allocated to any container (CPU and memory).", "currencyUSD",
			target{`sum(node_total_hourly_cost{cluster=~"$cluster"}) - sum(` + podCost + `)`, ""})).
		WithPanel(statValue("Storage hourly cost", "Persistent volumes: hourly price per GiB times capacity.", "currencyUSD",
			target{`sum(pv_hourly_cost{cluster=~"$cluster"} * on (cluster, persistentvolume) group_left max by (cluster, persistentvolume) (kube_persistentvolume_capacity_bytes{cluster=~"$cluster"}) / 1073741824)`, ""})).
		WithRow(row("Per cluster")).
		WithPanel(timeSeries("Hourly cost per cluster", "Node cost per cluster.", "currencyUSD",
			target{`sum by (cluster) (node_total_hourly_cost{cluster=~"$cluster"})`, "{{cluster}}"})).
		WithPanel(timeSeries("Idle cost per cluster", "Node cost minus the cost allocated to containers, per cluster.", "currencyUSD",
			target{`sum by (cluster) (node_total_hourly_cost{cluster=~"$cluster"}) - sum by (cluster) (` + podCost + `)`, "{{cluster}}"})).
		WithRow(row("Per namespace")).
		WithPanel(timeSeries("Hourly cost per namespace", "CPU and memory allocated to the namespace's containers, priced by their nodes.", "currencyUSD",
			target{`sum by (cluster, namespace) ` + podCost, "{{cluster}} {{namespace}}"})).
		WithPanel(timeSeries("Hourly CPU and memory cost", "The allocation cost split into CPU and memory, per cluster.", "currencyUSD",
			target{`sum by (cluster) (` + cpuCost + `)`, "{{cluster}} CPU"},
			target{`sum by (cluster) (` + ramCost + `)`, "{{cluster}} memory"})).
		WithRow(row("Top workloads")).
		WithPanel(tableOf("Hourly cost per workload", "Cost of each workload (the owner of its pods, from kube-state-metrics), top 50.", "currencyUSD",
			target{`topk(50, sum by (cluster, namespace, owner_kind, owner_name) (` + podCost + ` * on (cluster, namespace, pod) group_left (owner_kind, owner_name) max by (cluster, namespace, pod, owner_kind, owner_name) (kube_pod_owner{cluster=~"$cluster"})))`, ""}))
}
