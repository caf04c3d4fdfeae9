package vmstorageconnection

import (
	"kof.dev/kof/operator/vmapi"
	"path"
	"slices"
	"strconv"
	"strings"

	kofv1 "kof.dev/kof/operator/api/v1beta1"
)

// Command-line flags of vlselect and vtselect that carry extra storage nodes. Each is an array flag: one
// comma-separated entry per node, in the order of `storageNode` (https://docs.victoriametrics.com/victorialogs/cluster/).
const (
	ArgStorageNode           = "storageNode"
	ArgUsernameFile          = "storageNode.usernameFile"
	ArgPasswordFile          = "storageNode.passwordFile"
	ArgTLS                   = "storageNode.tls"
	ArgTLSInsecureSkipVerify = "storageNode.tlsInsecureSkipVerify"
)

// ManagedArgs returns the extraArgs keys the controller owns on a storage cluster's select component; every other
// key is left to others.
func ManagedArgs() []string {
	return []string{ArgStorageNode, ArgUsernameFile, ArgPasswordFile, ArgTLS, ArgTLSInsecureSkipVerify}
}

// Desired is what a storage cluster's select component must carry for a set of connections.
type Desired struct {
	// Args are the managed extraArgs; keys not needed by any connection are absent.
	Args map[string]string
	// Secrets are the names of the Secrets to mount (at /etc/vm/secrets/<name>/), sorted.
	Secrets []string
}

// DesiredFor returns the args and mounts for conns, which must all reference one cluster and be sorted by
// namespace/name (the order of the storage nodes). secretName maps a connection's credentials Secret to the name
// it has in the cluster's namespace (itself, or its copy). Connections without credentials get empty file entries,
// and the TLS flags are present only when some node enables TLS.
func DesiredFor(conns []kofv1.VMStorageConnection, secretName func(*kofv1.VMStorageConnection) string) Desired {
	d := Desired{Args: map[string]string{}}
	if len(conns) == 0 {
		return d
	}
	var nodes, users, passwords, tls, insecure []string
	anyAuth, anyTLS := false, false
	seen := map[string]bool{}
	for i := range conns {
		c := &conns[i]
		node := c.Spec.TargetStorageNode
		nodes = append(nodes, nodeAddress(node.Address))
		user, pass := "", ""
		if node.Secret != nil {
			name := secretName(c)
			dir := path.Join(vmapi.SecretsDir, name)
			user, pass = path.Join(dir, node.Secret.UsernameKey), path.Join(dir, node.Secret.PasswordKey)
			anyAuth = true
			if !seen[name] {
				seen[name] = true
				d.Secrets = append(d.Secrets, name)
			}
		}
		users, passwords = append(users, user), append(passwords, pass)
		enabled, skip := false, false
		if node.TLSConfig != nil {
			enabled, skip = node.TLSConfig.Enabled, node.TLSConfig.InsecureSkipVerify
		}
		anyTLS = anyTLS || enabled
		tls, insecure = append(tls, strconv.FormatBool(enabled)), append(insecure, strconv.FormatBool(skip))
	}
	d.Args[ArgStorageNode] = strings.Join(nodes, ",")
	if anyAuth {
		d.Args[ArgUsernameFile] = strings.Join(users, ",")
		d.Args[ArgPasswordFile] = strings.Join(passwords, ",")
	}
	if anyTLS {
		d.Args[ArgTLS] = strings.Join(tls, ",")
		d.Args[ArgTLSInsecureSkipVerify] = strings.Join(insecure, ",")
	}
	slices.Sort(d.Secrets)
	return d
}

// nodeAddress returns address as one entry of the storageNode flag: `host[:port][/path]`, without an `http://` or
// `https://` scheme. vlselect and vtselect put the scheme in front of the entry themselves (`https://` when the
// entry's storageNode.tls is true), so `https://vmauth.<domain>/vts` would be dialled as host `https`; the scheme
// of a connection's address is carried by its TLS flag instead (proven against a real select node by
// TestStorageNodeFormQueries).
func nodeAddress(address string) string {
	for _, scheme := range []string{"https://", "http://"} {
		if rest, ok := strings.CutPrefix(address, scheme); ok {
			return rest
		}
	}
	return address
}

// CurrentArgs returns the managed keys present in extraArgs.
func CurrentArgs(extraArgs map[string]string) map[string]string {
	out := map[string]string{}
	for _, k := range ManagedArgs() {
		if v, ok := extraArgs[k]; ok {
			out[k] = v
		}
	}
	return out
}

// MergeSecrets returns the Secrets list a select component must carry: the current entries that were not mounted
// by this controller (previous lists those it mounted), plus ours, sorted and without duplicates.
func MergeSecrets(current, previous, ours []string) []string {
	var out []string
	for _, s := range current {
		if !slices.Contains(previous, s) {
			out = append(out, s)
		}
	}
	out = append(out, ours...)
	slices.Sort(out)
	return slices.Compact(out)
}
