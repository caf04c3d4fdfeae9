package names

import (
	"fmt"
	"strings"
	"testing"
)

func TestAdler32MatchesContractVectors(t *testing.T) {
	cases := map[string]string{
		"kof-cluster-config-child-adopted/kcm-system": "1789071502",
		"kof-regional-adopted/kcm-system":             "3200650249",
		"":                                            "1",
	}
	for in, want := range cases {
		if got := Adler32(in); got != want {
			t.Errorf("Adler32(%q) = %q, want %q", in, got, want)
		}
	}
	if got := LegacyChildVMUserBase("kcm-system", "child-adopted"); got != "1789071502" {
		t.Errorf("LegacyChildVMUserBase = %q, want 1789071502", got)
	}
	if got := LegacyAdminVMUserBase("kcm-system", "regional-adopted"); got != "admin-3200650249" {
		t.Errorf("LegacyAdminVMUserBase = %q, want admin-3200650249", got)
	}
}

func TestFNV1a(t *testing.T) {
	// Reference values of 64-bit FNV-1a (offset basis cbf29ce484222325 for the empty input).
	cases := map[string]string{"": "cbf29ce484222325", "a": "af63dc4c8601ec8c"}
	for in, want := range cases {
		if got := FNV1a(in); got != want {
			t.Errorf("FNV1a(%q) = %q, want %q", in, got, want)
		}
	}
}

func TestHashedNamesMatchContractVectors(t *testing.T) {
	cases := []struct{ name, got, want string }{
		{"child base", ChildVMUserBase("kcm-system", "child-adopted"), "child-adopted-eea83bde02"},
		{"admin base", AdminVMUserBase("kcm-system", "regional-adopted"), "admin-regional-adopted-75bac0fcc3"},
		{"short child", ChildVMUserBase("kcm-system", "c7"), "c7-b7f0a206d3"},
		{"secret", VMUserSecret("c7-b7f0a206d3"), "kof-vmuser-creds-c7-b7f0a206d3"},
		{"vmuser", VMUser("c7-b7f0a206d3"), "kof-vmuser-c7-b7f0a206d3"},
		{"propagation", VMUserPropagation("c7-b7f0a206d3"), "kof-vmuser-propagation-c7-b7f0a206d3"},
		{"regional cm", RegionalConfigMap("regional-1"), "kof-regional-1"},
		{"child cm", ChildConfigMap("child-1"), "kof-cluster-config-child-1"},
		{"vmrules cm", VMRulesConfigMap("regional-1"), "kof-record-vmrules-regional-1"},
		{"psg", PromxyServerGroup("kcm-system", "regional-1"), "promxy-server-group-" + FNV1a("kcm-system/regional-1")},
		{"logs conn", StorageConnection(StorageLogs, "kcm-system", "regional-1"), "kof-logs-storage-connection-" + FNV1a("kcm-system/regional-1")},
		{"audit conn", StorageConnection(StorageAuditLogs, "ns", "r"), "kof-audit-logs-storage-connection-" + FNV1a("ns/r")},
	}
	for _, c := range cases {
		if c.got != c.want {
			t.Errorf("%s: got %q, want %q", c.name, c.got, c.want)
		}
	}
}

// TestLongestPrefixFits checks that the longest prefix with the longest base stays a valid 63-character name.
func TestLongestPrefixFits(t *testing.T) {
	long := strings.Repeat("x", 253)
	for _, base := range []string{ChildVMUserBase("kcm-system", long), AdminVMUserBase("kcm-system", long)} {
		if len(base) != MaxBaseLength {
			t.Errorf("base %q has %d characters, want %d", base, len(base), MaxBaseLength)
		}
		for _, n := range []string{VMUserPropagation(base), VMUserSecret(base), VMUser(base)} {
			if !IsDNSLabel(n) || !strings.HasSuffix(n, base) {
				t.Errorf("%q is not a DNS label ending in the base %q", n, base)
			}
		}
	}
}

func TestLongNamesSharingAPrefixStayDistinct(t *testing.T) {
	prefix := strings.Repeat("p", 40)
	a, b := prefix+strings.Repeat("a", 30), prefix+strings.Repeat("b", 30)
	funcs := map[string]func(string) string{
		"ChildVMUserBase":   func(c string) string { return ChildVMUserBase("kcm-system", c) },
		"AdminVMUserBase":   func(c string) string { return AdminVMUserBase("kcm-system", c) },
		"RegionalConfigMap": RegionalConfigMap,
		"ChildConfigMap":    ChildConfigMap,
		"VMRulesConfigMap":  VMRulesConfigMap,
	}
	for name, f := range funcs {
		x, y := f(a), f(b)
		if x == y {
			t.Errorf("%s gives %q for two different 70-character names", name, x)
		}
		if !IsDNSLabel(x) || !IsDNSLabel(y) {
			t.Errorf("%s: %q or %q is not a DNS label", name, x, y)
		}
	}
}

func TestSameClusterInTwoNamespaces(t *testing.T) {
	funcs := map[string]func(ns, c string) string{
		"ChildConfigPropagation": ChildConfigPropagation,
		"VMRulesPropagation":     VMRulesPropagation,
		"PromxyServerGroup":      PromxyServerGroup,
		"ChildVMUserBase":        ChildVMUserBase,
		"AdminVMUserBase":        AdminVMUserBase,
		"StorageConnection":      func(ns, c string) string { return StorageConnection(StorageTraces, ns, c) },
	}
	for name, f := range funcs {
		if x, y := f("ns-a", "regional-1"), f("ns-b", "regional-1"); x == y {
			t.Errorf("%s gives %q for regional-1 in two namespaces", name, x)
		}
	}
}

func TestThousandChildrenGetDistinctNames(t *testing.T) {
	for _, format := range []string{"c%d", "child-%03d"} {
		seen := map[string]string{}
		legacy := map[string]bool{}
		for i := 0; i < 1000; i++ {
			c := fmt.Sprintf(format, i)
			base := ChildVMUserBase("kcm-system", c)
			if other, dup := seen[base]; dup {
				t.Fatalf("%s and %s share the base %q", other, c, base)
			}
			seen[base] = c
			legacy[LegacyChildVMUserBase("kcm-system", c)] = true
		}
		// The Adler-32 scheme of earlier releases collides on these inputs; the new one must not.
		if len(legacy) >= 1000 {
			t.Errorf("%s: expected Adler-32 collisions, got %d distinct legacy names", format, len(legacy))
		}
		t.Logf("%s: 1000 distinct bases (Adler-32 gives %d)", format, len(legacy))
	}
}

func TestAwkwardInputs(t *testing.T) {
	inputs := []string{"", "-", "A.B.C", "UPPER", "ünïcödé-クラスター", "a..b", strings.Repeat("z", 63), "trailing-", "9start"}
	for _, in := range inputs {
		for _, n := range []string{
			ChildVMUserBase("ns", in), AdminVMUserBase("ns", in), RegionalConfigMap(in), ChildConfigMap(in),
			VMRulesConfigMap(in), VMUserSecret(in), ChildConfigPropagation("ns", in),
		} {
			if !IsDNSLabel(n) {
				t.Errorf("input %q gave %q, not a DNS label", in, n)
			}
		}
	}
	if a, b := RegionalConfigMap("a.b"), RegionalConfigMap("a-b"); a == b {
		t.Errorf("a.b and a-b share the ConfigMap name %q", a)
	}
}

func TestIsDNSLabel(t *testing.T) {
	cases := map[string]bool{"a": true, "a-b": true, "0a": true, "-a": false, "a-": false, "A": false, "a.b": false,
		"": false, strings.Repeat("a", 63): true, strings.Repeat("a", 64): false}
	for in, want := range cases {
		if got := IsDNSLabel(in); got != want {
			t.Errorf("IsDNSLabel(%q) = %v, want %v", in, got, want)
		}
	}
}

// FuzzNames asserts, for any cluster name and namespace, that every generated name is a valid DNS label of at most
// 63 characters and that generation is deterministic.
func FuzzNames(f *testing.F) {
	for _, s := range []string{"child-1", "kcm-system", "A.B", "ünï", strings.Repeat("x", 100), "--", ""} {
		f.Add(s, "kcm-system")
	}
	f.Fuzz(func(t *testing.T, cluster, namespace string) {
		all := func() []string {
			base := ChildVMUserBase(namespace, cluster)
			admin := AdminVMUserBase(namespace, cluster)
			return []string{
				base, admin, VMUserSecret(base), VMUser(admin), VMUserPropagation(base),
				RegionalConfigMap(cluster), ChildConfigMap(cluster), VMRulesConfigMap(cluster),
				PromxyServerGroup(namespace, cluster), StorageConnection(StorageAuditLogs, namespace, cluster),
				ChildConfigPropagation(namespace, cluster), VMRulesPropagation(namespace, cluster),
			}
		}
		first, second := all(), all()
		for i, n := range first {
			if !IsDNSLabel(n) {
				t.Fatalf("name %d for (%q, %q) = %q is not a DNS label of at most 63 characters", i, cluster, namespace, n)
			}
			if n != second[i] {
				t.Fatalf("name %d for (%q, %q) is not deterministic: %q then %q", i, cluster, namespace, n, second[i])
			}
		}
		if b := ChildVMUserBase(namespace, cluster); len(b) > MaxBaseLength {
			t.Fatalf("base %q longer than %d", b, MaxBaseLength)
		}
	})
}

// TestIstioVMAuthServiceKeepsItsSuffix is the regression test of an Istio regional whose name is over 56 characters:
// its in-mesh Service name was cut to `…-vm` by the chart while the child MCS and the operator used `…-vmauth`. The
// one rule keeps short names as they are and gives long ones a hash, always ending in `-vmauth`.
func TestIstioVMAuthServiceKeepsItsSuffix(t *testing.T) {
	long := strings.Repeat("r", 57)
	cases := []struct{ name, in, want string }{
		{"short", "regional-istio", "regional-istio-vmauth"},
		{"56 characters", strings.Repeat("a", 56), strings.Repeat("a", 56) + "-vmauth"},
		{"57 characters", long, strings.Repeat("r", 45) + "-" + Hash(long+"-vmauth") + "-vmauth"},
		{"dotted", "eu.west.1", "eu-west-1-" + Hash("eu.west.1-vmauth") + "-vmauth"},
	}
	for _, c := range cases {
		got := IstioVMAuthService(c.in)
		if got != c.want {
			t.Errorf("%s: IstioVMAuthService(%q) = %q, want %q", c.name, c.in, got, c.want)
		}
		if !IsDNSLabel(got) || !strings.HasSuffix(got, IstioVMAuthSuffix) {
			t.Errorf("%s: %q is not a DNS label ending in %s", c.name, got, IstioVMAuthSuffix)
		}
	}
	if a, b := IstioVMAuthService(long+"a"), IstioVMAuthService(long+"b"); a == b {
		t.Errorf("two long names share the Service name %q", a)
	}
}
