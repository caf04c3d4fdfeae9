// Package names is the single definition of every name the KOF operator and charts generate.
//
// The rules come from the KOF contract (shared docs/contract.md, "Objects the operator writes" and "Hashed names"):
//   - plain composed names (`kof-<cluster>`, `kof-cluster-config-<cluster>`, ...) keep their historical form whenever
//     the result is already a valid DNS-1123 label of at most 63 characters;
//   - credential bases are `<readable>-<h>`, h being the first 10 hex characters of sha256 of an identity string,
//     which keeps names unique per cluster where the Adler-32 scheme of earlier releases collided;
//   - names of objects that must be unique per namespaced cluster hash `namespace/name`.
//
// Every function returns a valid DNS-1123 label (lower-case alphanumerics and '-', starting and ending with an
// alphanumeric) of at most 63 characters. The package uses the standard library only so that chartlib can check the
// charts' helpers against it (parity tests).
package names

import (
	"crypto/sha256"
	"encoding/hex"
	"hash/adler32"
	"hash/fnv"
	"regexp"
	"strconv"
	"strings"
)

const (
	// MaxNameLength is the longest DNS-1123 label Kubernetes accepts.
	MaxNameLength = 63
	// MaxBaseLength is the longest credential base, so that the longest prefix
	// (VMUserPropagationPrefix, 23 characters) still yields a name of at most 63 characters.
	MaxBaseLength = 40
	// HashLength is the number of hex characters of sha256 kept in hashed names.
	HashLength = 10

	// RegionalConfigMapPrefix prefixes the regional ConfigMap `kof-<cluster>`.
	RegionalConfigMapPrefix = "kof-"
	// ChildConfigMapPrefix prefixes the child ConfigMap `kof-cluster-config-<cluster>`.
	ChildConfigMapPrefix = "kof-cluster-config-"
	// VMRulesConfigMapPrefix prefixes the per-cluster record rules ConfigMap.
	VMRulesConfigMapPrefix = "kof-record-vmrules-"
	// VMUserSecretPrefix prefixes the credentials Secret of a VMUser bundle.
	VMUserSecretPrefix = "kof-vmuser-creds-"
	// VMUserPrefix prefixes the VMUser of a VMUser bundle.
	VMUserPrefix = "kof-vmuser-"
	// VMUserPropagationPrefix prefixes the MultiClusterService that copies a VMUser bundle to the regional cluster.
	VMUserPropagationPrefix = "kof-vmuser-propagation-"
	// AdminBasePrefix prefixes the base of a regional cluster's admin VMUser bundle.
	AdminBasePrefix = "admin-"
	// PromxyServerGroupPrefix prefixes a regional cluster's PromxyServerGroup.
	PromxyServerGroupPrefix = "promxy-server-group-"
	// ChildConfigPropagationPrefix prefixes the MCS propagating child ConfigMaps to a KCM region.
	ChildConfigPropagationPrefix = "kof-child-config-propagation-"
	// VMRulesPropagationPrefix prefixes the MCS propagating vmrules ConfigMaps to a KCM region.
	VMRulesPropagationPrefix = "kof-vm-rules-propagation-"
	// IstioVMAuthSuffix ends the in-mesh Service of a regional cluster's VMAuth, `<cluster>-vmauth`.
	IstioVMAuthSuffix = "-vmauth"
)

// StorageKind is a kind of VictoriaMetrics storage a VMStorageConnection points at.
type StorageKind string

// The three storage connections a regional cluster gets (docs/contract.md, "VMStorageConnection ×3").
const (
	StorageTraces    StorageKind = "traces"
	StorageLogs      StorageKind = "logs"
	StorageAuditLogs StorageKind = "audit-logs"
)

var invalidLabelChars = regexp.MustCompile(`[^a-z0-9-]+`)

// Adler32 returns the decimal Adler-32 checksum of s, equal to Helm's (sprig) `adler32sum`.
// Earlier KOF releases named credentials with it; it is kept only to recognise their objects.
func Adler32(s string) string {
	return strconv.FormatUint(uint64(adler32.Checksum([]byte(s))), 10)
}

// FNV1a returns the 64-bit FNV-1a hash of s as 16 lower-case hex characters.
func FNV1a(s string) string {
	h := fnv.New64a()
	_, _ = h.Write([]byte(s)) // hash.Hash never returns an error
	return hex.EncodeToString(h.Sum(nil))
}

// Hash returns the first HashLength (10) lower-case hex characters of sha256(s).
// Charts compute the same with sprig: `sha256sum | trunc 10`.
func Hash(s string) string {
	sum := sha256.Sum256([]byte(s))
	return hex.EncodeToString(sum[:])[:HashLength]
}

// Readable turns s into a DNS-label fragment of at most max characters: lower-cased, every run of characters
// outside [a-z0-9-] replaced by one '-', leading and trailing '-' removed, cut to max, trailing '-' removed again.
// It may return "". Charts compute the same with sprig:
// `regexReplaceAll "[^a-z0-9-]+" (lower s) "-" | trimAll "-" | trunc max | trimAll "-"`.
func Readable(s string, max int) string {
	r := strings.Trim(invalidLabelChars.ReplaceAllString(strings.ToLower(s), "-"), "-")
	if max < 0 {
		max = 0
	}
	if len(r) > max {
		r = r[:max]
	}
	return strings.Trim(r, "-")
}

// hashed joins readable(name), cut so that the whole stays within limit, and Hash(identity):
// `<readable>-<h>`, or `<h>` when nothing of name is readable.
func hashed(prefix, name, identity string, limit int) string {
	h := Hash(identity)
	r := Readable(name, limit-len(prefix)-len(h)-1)
	if r == "" {
		return prefix + h
	}
	return prefix + r + "-" + h
}

// IsDNSLabel reports whether s is a valid DNS-1123 label of at most 63 characters.
func IsDNSLabel(s string) bool {
	if s == "" || len(s) > MaxNameLength {
		return false
	}
	for i := 0; i < len(s); i++ {
		c := s[i]
		alnum := (c >= 'a' && c <= 'z') || (c >= '0' && c <= '9')
		if !alnum && (c != '-' || i == 0 || i == len(s)-1) {
			return false
		}
	}
	return true
}

// composed returns prefix+name when that is a valid DNS label; otherwise a shortened, sanitised form with the hash
// of prefix+name as suffix, so that distinct inputs keep distinct names.
func composed(prefix, name string) string {
	if full := prefix + name; IsDNSLabel(full) {
		return full
	}
	return hashed(prefix, name, prefix+name, MaxNameLength)
}

// suffixed returns name+suffix when that is a valid DNS label; otherwise the readable part of name, cut so that the
// whole stays within 63 characters, the hash of name+suffix, then suffix: `<readable>-<h><suffix>` (`<h><suffix>`
// when nothing of name is readable). Distinct inputs keep distinct names, and the suffix is kept.
func suffixed(name, suffix string) string {
	if full := name + suffix; IsDNSLabel(full) {
		return full
	}
	return hashed("", name, name+suffix, MaxNameLength-len(suffix)) + suffix
}

// IstioVMAuthService returns the name of the in-mesh Service of a regional cluster's VMAuth: `<cluster>-vmauth`,
// shortened by the suffixed rule when that is not a valid DNS label (a cluster name over 56 characters keeps its
// `-vmauth` suffix and gets a hash, never a cut suffix). kof-storage names the Service with it, and the Istio
// endpoints `http://<IstioVMAuthService>:8427/...` of docs/contract.md ("Endpoints") use it as their host.
func IstioVMAuthService(cluster string) string { return suffixed(cluster, IstioVMAuthSuffix) }

// RegionalConfigMap returns the name of the regional ConfigMap of cluster: `kof-<cluster>`.
func RegionalConfigMap(cluster string) string { return composed(RegionalConfigMapPrefix, cluster) }

// ChildConfigMap returns the name of the child ConfigMap of cluster: `kof-cluster-config-<cluster>`.
// The child MultiClusterService reads it as templateResourceRef `ChildConfig`.
func ChildConfigMap(cluster string) string { return composed(ChildConfigMapPrefix, cluster) }

// VMRulesConfigMap returns the name of the per-cluster record rules ConfigMap: `kof-record-vmrules-<cluster>`.
func VMRulesConfigMap(cluster string) string { return composed(VMRulesConfigMapPrefix, cluster) }

// ChildIdentity returns the identity string of a child's VMUser bundle: `kof-cluster-config-<cluster>/<namespace>`.
func ChildIdentity(namespace, cluster string) string {
	return ChildConfigMapPrefix + cluster + "/" + namespace
}

// AdminIdentity returns the identity string of a regional cluster's admin VMUser bundle: `kof-<cluster>/<namespace>`.
func AdminIdentity(namespace, cluster string) string {
	return RegionalConfigMapPrefix + cluster + "/" + namespace
}

// ChildVMUserBase returns the base of a child cluster's VMUser bundle, at most 40 characters:
// `<readable cluster>-<Hash(ChildIdentity)>`, e.g. child-adopted in kcm-system → child-adopted-eea83bde02.
func ChildVMUserBase(namespace, cluster string) string {
	return hashed("", cluster, ChildIdentity(namespace, cluster), MaxBaseLength)
}

// AdminVMUserBase returns the base of a regional cluster's admin VMUser bundle, at most 40 characters:
// `admin-<readable cluster>-<Hash(AdminIdentity)>`, e.g. regional-adopted in kcm-system →
// admin-regional-adopted-75bac0fcc3.
func AdminVMUserBase(namespace, cluster string) string {
	return hashed(AdminBasePrefix, cluster, AdminIdentity(namespace, cluster), MaxBaseLength)
}

// LegacyChildVMUserBase returns the base earlier KOF releases used for a child: decimal Adler32(ChildIdentity).
// Used only to find and remove objects those releases made.
func LegacyChildVMUserBase(namespace, cluster string) string {
	return Adler32(ChildIdentity(namespace, cluster))
}

// LegacyAdminVMUserBase returns the base earlier KOF releases used for a regional admin: `admin-` +
// decimal Adler32(AdminIdentity). Used only to find and remove objects those releases made.
func LegacyAdminVMUserBase(namespace, cluster string) string {
	return AdminBasePrefix + Adler32(AdminIdentity(namespace, cluster))
}

// VMUserSecret returns the credentials Secret name of the bundle with the given base: `kof-vmuser-creds-<base>`.
func VMUserSecret(base string) string { return composed(VMUserSecretPrefix, base) }

// VMUser returns the VMUser name of the bundle with the given base: `kof-vmuser-<base>`.
func VMUser(base string) string { return composed(VMUserPrefix, base) }

// VMUserPropagation returns the propagation MultiClusterService name of the bundle: `kof-vmuser-propagation-<base>`.
func VMUserPropagation(base string) string { return composed(VMUserPropagationPrefix, base) }

// clusterKey is the identity of a namespaced cluster for cluster-scoped or per-namespace-unique names.
func clusterKey(namespace, cluster string) string { return namespace + "/" + cluster }

// PromxyServerGroup returns the PromxyServerGroup name of a regional cluster: `promxy-server-group-<FNV1a(ns/name)>`.
func PromxyServerGroup(namespace, cluster string) string {
	return PromxyServerGroupPrefix + FNV1a(clusterKey(namespace, cluster))
}

// StorageConnection returns the VMStorageConnection name of a regional cluster for one storage kind:
// `kof-<kind>-storage-connection-<FNV1a(ns/name)>`.
func StorageConnection(kind StorageKind, namespace, cluster string) string {
	return "kof-" + string(kind) + "-storage-connection-" + FNV1a(clusterKey(namespace, cluster))
}

// ChildConfigPropagation returns the cluster-scoped MultiClusterService name that propagates child ConfigMaps to a
// KCM region cluster: `kof-child-config-propagation-<Hash(ns/name)>`. Hashing namespace and name keeps two clusters
// of one name in two namespaces apart (docs/contract.md, **ours**).
func ChildConfigPropagation(namespace, cluster string) string {
	return ChildConfigPropagationPrefix + Hash(clusterKey(namespace, cluster))
}

// VMRulesPropagation returns the cluster-scoped MultiClusterService name that propagates vmrules ConfigMaps to a KCM
// region cluster: `kof-vm-rules-propagation-<Hash(ns/name)>`.
func VMRulesPropagation(namespace, cluster string) string {
	return VMRulesPropagationPrefix + Hash(clusterKey(namespace, cluster))
}
