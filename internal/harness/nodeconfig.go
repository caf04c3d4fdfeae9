package harness

import (
	"fmt"
	"os"
	"os/exec"
	"path/filepath"
)

// containerdConfig is containerd's configuration (version 2, containerd 1.6): state, sockets and the CRI plugin's
// folders in the scratch folder; the overlayfs snapshotter; runc with the cgroupfs driver; no AppArmor; oom_score_adj
// kept at or above containerd's own (lowering it needs CAP_SYS_RESOURCE); the pause image of the node's registry as
// the sandbox image; the registry reached over plain HTTP. %[1]s is the scratch folder, %[2]s the sandbox image,
// %[3]s the registry, %[4]s the CNI plugins' folder, %[5]s runc.
const containerdConfig = `version = 2
root = "%[1]s/containerd/root"
state = "%[1]s/containerd/state"
disabled_plugins = ["io.containerd.snapshotter.v1.btrfs", "io.containerd.snapshotter.v1.zfs",
  "io.containerd.snapshotter.v1.devmapper", "io.containerd.snapshotter.v1.aufs"]
[grpc]
  address = "%[1]s/containerd/containerd.sock"
[ttrpc]
  address = "%[1]s/containerd/containerd.sock.ttrpc"
[plugins."io.containerd.grpc.v1.cri"]
  sandbox_image = "%[2]s"
  stream_server_address = "127.0.0.1"
  stream_server_port = "0"
  disable_apparmor = true
  restrict_oom_score_adj = true
  netns_mounts_under_state_dir = true
  [plugins."io.containerd.grpc.v1.cri".containerd]
    snapshotter = "overlayfs"
    default_runtime_name = "runc"
    [plugins."io.containerd.grpc.v1.cri".containerd.runtimes.runc]
      runtime_type = "io.containerd.runc.v2"
      [plugins."io.containerd.grpc.v1.cri".containerd.runtimes.runc.options]
        SystemdCgroup = false
        BinaryName = "%[5]s"
  [plugins."io.containerd.grpc.v1.cri".cni]
    bin_dir = "%[4]s"
    conf_dir = "%[1]s/cni/net.d"
  [plugins."io.containerd.grpc.v1.cri".registry.mirrors."%[3]s"]
    endpoint = ["http://%[3]s"]
[plugins."io.containerd.internal.v1.opt"]
  path = "%[1]s/containerd/opt"
`

// cniConfig is the pods' network: a bridge with host-local addresses from PodSubnet (the node routes between pods
// and to the node IP) and portmap for hostPorts. %[1]s is the scratch folder, %[2]s the subnet.
const cniConfig = `{"cniVersion": "0.4.0", "name": "kof-node", "plugins": [
  {"type": "bridge", "bridge": "cni0", "isGateway": true, "ipMasq": false, "hairpinMode": true,
   "ipam": {"type": "host-local", "dataDir": "%[1]s/cni/ipam", "ranges": [[{"subnet": "%[2]s"}]],
            "routes": [{"dst": "0.0.0.0/0"}]}},
  {"type": "portmap", "capabilities": {"portMappings": true}}]}
`

// kubeletConfig is the kubelet's KubeletConfiguration: cgroupfs under the node's own cgroup folder (RunInNode),
// cgroup v1 accepted (failCgroupV1, the machines KOF is tested on may still use it), no swap check, containerd's
// socket, x509 client authentication against the node CA (the API server's kubelet client) and no other, the
// serving address on the node IP (the API server dials the InternalIP for logs and exec), no DNS (pods reach the API
// server by the `kubernetes` Service's environment), eviction and image garbage collection effectively off (the
// scratch folder lives on a shared disk whose fill level is not the node's: thresholds in bytes and inodes, never
// percentages, since a shared disk with less than 1% free would taint the node with DiskPressure and stop every
// schedule), volume plugins and pod logs in the
// scratch folder. %[1]s is the scratch folder, %[2]s the cgroup root.
const kubeletConfig = `apiVersion: kubelet.config.k8s.io/v1beta1
kind: KubeletConfiguration
cgroupDriver: cgroupfs
cgroupRoot: %[2]s
failCgroupV1: false
failSwapOn: false
containerRuntimeEndpoint: unix://%[1]s/containerd/containerd.sock
imageServiceEndpoint: unix://%[1]s/containerd/containerd.sock
staticPodPath: %[1]s/kubelet/manifests
address: %[3]s
port: 10250
readOnlyPort: 0
healthzBindAddress: 127.0.0.1
healthzPort: 10248
authentication:
  anonymous: {enabled: false}
  webhook: {enabled: false}
  x509: {clientCAFile: %[1]s/pki/ca.crt}
authorization: {mode: AlwaysAllow}
podLogsDir: %[1]s/kubelet/logs
volumePluginDir: %[1]s/kubelet/volume-plugins
resolvConf: ""
evictionHard: {memory.available: "1Mi", nodefs.available: "1Mi", imagefs.available: "1Mi", nodefs.inodesFree: "1",
  imagefs.inodesFree: "1"}
imageGCHighThresholdPercent: 100
imageGCLowThresholdPercent: 99
protectKernelDefaults: false
serializeImagePulls: false
nodeStatusReportFrequency: 10s
syncFrequency: 10s
fileCheckFrequency: 5s
`

// kubeProxyConfig is kube-proxy's KubeProxyConfiguration: iptables mode inside the node's network namespace, the
// node's pod range as the cluster CIDR, conntrack and OOM settings left as they are (they are machine-wide or need
// CAP_SYS_RESOURCE), no localhost NodePorts (that would set route_localnet), listeners on loopback. %[1]s is the
// scratch folder, %[2]s the pod subnet.
const kubeProxyConfig = `apiVersion: kubeproxy.config.k8s.io/v1alpha1
kind: KubeProxyConfiguration
clientConnection: {kubeconfig: %[1]s/proxy.kubeconfig}
hostnameOverride: %[3]s
mode: iptables
clusterCIDR: %[2]s
healthzBindAddress: 127.0.0.1:10256
metricsBindAddress: 127.0.0.1:10249
oomScoreAdj: 0
conntrack:
  maxPerCore: 0
  min: 0
  tcpEstablishedTimeout: 0s
  tcpCloseWaitTimeout: 0s
iptables:
  localhostNodePorts: false
`

// registryConfig is the node registry's configuration: storage in the scratch folder, plain HTTP on NodeRegistry.
const nodeRegistryConfig = `version: 0.1
log:
  level: error
  accesslog:
    disabled: true
storage:
  filesystem:
    rootdirectory: %s/registry
http:
  addr: %s
`

// writeConfigs writes every configuration file and kubeconfig of the node into its scratch folder.
func (n *Node) writeConfigs() error {
	cgroupRoot := os.Getenv(nodeCgroupEnv)
	if cgroupRoot == "" {
		return fmt.Errorf("%s is not set: StartNode runs under harness.RunInNode", nodeCgroupEnv)
	}
	for _, d := range []string{"containerd", "cni/net.d", "cni/ipam", "kubelet/manifests", "kubelet/logs",
		"kubelet/volume-plugins", "kubelet/root", "kubelet/pki", "logs", "etcd", "registry", "apiserver",
		"controller-manager", "scheduler"} {
		if err := os.MkdirAll(n.path(d), 0o755); err != nil {
			return err
		}
	}
	runc, err := exec.LookPath("runc")
	if err != nil {
		return fmt.Errorf("runc not found: install the node's Debian packages with `bash ci/node.sh`: %w", err)
	}
	files := map[string]string{
		"containerd/config.toml":         fmt.Sprintf(containerdConfig, n.Dir, NodePauseImage, NodeRegistry, cniDir, runc),
		"cni/net.d/10-kof-node.conflist": fmt.Sprintf(cniConfig, n.Dir, PodSubnet),
		"kubelet.yaml":                   fmt.Sprintf(kubeletConfig, n.Dir, cgroupRoot, NodeIP),
		"kube-proxy.yaml":                fmt.Sprintf(kubeProxyConfig, n.Dir, PodSubnet, NodeName),
		"registry.yml":                   fmt.Sprintf(nodeRegistryConfig, n.Dir, NodeRegistry),
	}
	for _, id := range []string{"admin", "kubelet", "controller-manager", "scheduler", "proxy"} {
		files[id+".kubeconfig"] = nodeKubeconfig(n.pki, id)
	}
	for name, body := range files {
		if err := os.WriteFile(filepath.Join(n.Dir, name), []byte(body), 0o600); err != nil {
			return fmt.Errorf("write the node's %s: %w", name, err)
		}
	}
	n.Kubeconfig = n.path("admin.kubeconfig")
	return nil
}
