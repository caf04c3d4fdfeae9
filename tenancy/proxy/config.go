package proxy

import (
	"errors"
	"fmt"
	"net/url"
	"os"
	"regexp"
	"slices"
	"sort"
	"time"

	"sigs.k8s.io/yaml"
)

// Defaults of Config (docs/tenancy.md, "Limits").
const (
	// DefaultTenantClaim is the ID token claim that holds the user's groups.
	DefaultTenantClaim = "groups"
	// DefaultMaxRequestBytes bounds a request's form body.
	DefaultMaxRequestBytes = 1 << 20
	// DefaultMaxQueryBytes bounds one query or selector.
	DefaultMaxQueryBytes = 16 << 10
	// DefaultQueryTimeout bounds one request to an upstream, the response included.
	DefaultQueryTimeout = 60 * time.Second
	// DefaultMaxRulesBytes bounds the rules or alerts document read from the metrics upstream before filtering.
	DefaultMaxRulesBytes = 64 << 20
)

// Config is the tenant proxy's configuration file (YAML or JSON; the kof-mothership chart writes it from
// `tenantProxy` values). It holds no secret: ID tokens are checked against the issuer's public keys.
type Config struct {
	// Issuer is the OIDC issuer URL; its discovery document names the JWKS the token signatures are checked with.
	Issuer string `json:"issuer"`
	// Audience is the client ID ID tokens must be issued to (the `aud` claim), Grafana's OAuth client ID.
	Audience string `json:"audience"`
	// TenantClaim names the top-level claim holding the user's groups (a string or a list of strings).
	TenantClaim string `json:"tenantClaim,omitempty"`
	// AdminGroups are the groups whose members see every tenant; never an e-mail address.
	AdminGroups []string `json:"adminGroups,omitempty"`
	// Groups maps a group to the KOF tenants (the `k0rdent.mirantis.com/kof-tenant-id` label of the children) its
	// members see.
	Groups map[string][]string `json:"groups,omitempty"`
	// Upstreams are the read endpoints behind the proxy.
	Upstreams Upstreams `json:"upstreams"`
	// Limits bound each request.
	Limits Limits `json:"limits,omitempty"`
}

// Upstreams are the base URLs the proxy forwards to; an empty one is not served (404).
type Upstreams struct {
	// Metrics is the Prometheus API root (promxy), served under /prometheus.
	Metrics string `json:"metrics,omitempty"`
	// Logs is the LogsQL root of the logs select (VictoriaLogs), served under /logs.
	Logs string `json:"logs,omitempty"`
	// AuditLogs is the LogsQL root of the audit-logs select, served under /audit-logs.
	AuditLogs string `json:"auditLogs,omitempty"`
}

// Limits bound one request; zero means the default.
type Limits struct {
	MaxRequestBytes int64    `json:"maxRequestBytes,omitempty"`
	MaxQueryBytes   int      `json:"maxQueryBytes,omitempty"`
	QueryTimeout    Duration `json:"queryTimeout,omitempty"`
	MaxRulesBytes   int64    `json:"maxRulesBytes,omitempty"`
}

// Duration is a time.Duration written as a Go duration string ("60s").
type Duration struct{ time.Duration }

// UnmarshalJSON reads a duration string.
func (d *Duration) UnmarshalJSON(b []byte) error {
	var s string
	if err := yaml.Unmarshal(b, &s); err != nil {
		return fmt.Errorf("duration: want a string such as \"60s\": %w", err)
	}
	v, err := time.ParseDuration(s)
	if err != nil {
		return err
	}
	d.Duration = v
	return nil
}

// MarshalJSON writes the duration string.
func (d Duration) MarshalJSON() ([]byte, error) { return []byte(fmt.Sprintf("%q", d.String())), nil }

// tenantName is what a KOF tenant may be: a Kubernetes label value (docs/contract.md, "Cluster roles and labels").
var tenantName = regexp.MustCompile(`^[A-Za-z0-9]([A-Za-z0-9._-]{0,61}[A-Za-z0-9])?$`)

// LoadConfig reads and validates the configuration file at path (see Config.Validate).
func LoadConfig(path string) (*Config, error) {
	b, err := os.ReadFile(path)
	if err != nil {
		return nil, fmt.Errorf("read tenant proxy config: %w", err)
	}
	c := &Config{}
	if err := yaml.UnmarshalStrict(b, c); err != nil {
		return nil, fmt.Errorf("tenant proxy config %s: %w", path, err)
	}
	if err := c.Validate(); err != nil {
		return nil, fmt.Errorf("tenant proxy config %s: %w", path, err)
	}
	return c, nil
}

// Validate fills the defaults and returns every problem at once, each naming its field and the fix.
func (c *Config) Validate() error {
	var errs []error
	if u, err := url.Parse(c.Issuer); c.Issuer == "" || err != nil || u.Host == "" || (u.Scheme != "https" && u.Scheme != "http") {
		errs = append(errs, fmt.Errorf("issuer %q: set the OIDC issuer URL (https://...)", c.Issuer))
	}
	if c.Audience == "" {
		errs = append(errs, errors.New("audience: set the OAuth client ID the ID tokens are issued to"))
	}
	if c.TenantClaim == "" {
		c.TenantClaim = DefaultTenantClaim
	}
	for i, g := range c.AdminGroups {
		if g == "" {
			errs = append(errs, fmt.Errorf("adminGroups[%d]: empty group", i))
		}
		if regexp.MustCompile(`^[^@\s]+@[^@\s]+\.[^@\s]+$`).MatchString(g) {
			errs = append(errs, fmt.Errorf("adminGroups[%d] %q looks like an e-mail address: name a group of the issuer", i, g))
		}
	}
	for _, g := range sortedKeys(c.Groups) {
		if len(c.Groups[g]) == 0 {
			errs = append(errs, fmt.Errorf("groups.%s: list at least one tenant", g))
		}
		for i, t := range c.Groups[g] {
			if !tenantName.MatchString(t) {
				errs = append(errs, fmt.Errorf("groups.%s[%d] %q: a tenant is a label value (letters, digits, '-', '_', '.')", g, i, t))
			}
		}
	}
	for name, raw := range map[string]string{"upstreams.metrics": c.Upstreams.Metrics, "upstreams.logs": c.Upstreams.Logs,
		"upstreams.auditLogs": c.Upstreams.AuditLogs} {
		if raw == "" {
			continue
		}
		if u, err := url.Parse(raw); err != nil || u.Host == "" || (u.Scheme != "http" && u.Scheme != "https") {
			errs = append(errs, fmt.Errorf("%s %q: want an http(s) URL", name, raw))
		}
	}
	if c.Upstreams == (Upstreams{}) {
		errs = append(errs, errors.New("upstreams: set at least one of metrics, logs, auditLogs"))
	}
	if c.Limits.MaxRequestBytes <= 0 {
		c.Limits.MaxRequestBytes = DefaultMaxRequestBytes
	}
	if c.Limits.MaxQueryBytes <= 0 {
		c.Limits.MaxQueryBytes = DefaultMaxQueryBytes
	}
	if c.Limits.QueryTimeout.Duration <= 0 {
		c.Limits.QueryTimeout.Duration = DefaultQueryTimeout
	}
	if c.Limits.MaxRulesBytes <= 0 {
		c.Limits.MaxRulesBytes = DefaultMaxRulesBytes
	}
	errs = slices.DeleteFunc(errs, func(e error) bool { return e == nil })
	sort.Slice(errs, func(i, j int) bool { return errs[i].Error() < errs[j].Error() })
	return errors.Join(errs...)
}

func sortedKeys[V any](m map[string]V) []string {
	out := make([]string, 0, len(m))
	for k := range m {
		out = append(out, k)
	}
	sort.Strings(out)
	return out
}
