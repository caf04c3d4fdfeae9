// Package promxy builds the promxy configuration file that the KOF operator stores in the promxy config Secret.
//
// The configuration is assembled from Go structs and marshalled to YAML, never from string templates. The shape
// follows docs/contract.md, "Promxy configuration": a Prometheus-style `global`, `rule_files`, `alerting` and
// `remote_write` section plus promxy's own `promxy.server_groups` list (https://github.com/jacksontj/promxy,
// cmd/promxy/config.yaml), one server group per PromxyServerGroup object.
package promxy

import (
	"errors"
	"fmt"
	"net/url"
	"slices"
	"strings"
	"time"

	"sigs.k8s.io/yaml"
)

const (
	// ConfigKey is the key of the promxy config Secret that holds the configuration file.
	ConfigKey = "config.yaml"
	// EvaluationInterval is the rule evaluation interval promxy runs with.
	EvaluationInterval = "5s"
	// SourceLabel is the external label name promxy adds to everything it sends out.
	SourceLabel = "source"
	// SourceValue is the value of SourceLabel.
	SourceValue = "promxy"
	// RuleFilesGlob is where promxy reads its rule files (the promxy rules ConfigMap is mounted there).
	RuleFilesGlob = "/etc/promxy/rules/*.yaml"
	// ClusterLabel names the label carrying a server group's cluster name.
	ClusterLabel = "promxyCluster"
	// ClusterNamespaceLabel names the label carrying a server group's cluster namespace.
	ClusterNamespaceLabel = "promxyClusterNamespace"
	// SchemeHTTP and SchemeHTTPS are the schemes a server group may use.
	SchemeHTTP  = "http"
	SchemeHTTPS = "https"
)

// Config is the whole promxy configuration file.
type Config struct {
	Global      Global        `json:"global"`
	RuleFiles   []string      `json:"rule_files"`
	Alerting    *Alerting     `json:"alerting,omitempty"`
	RemoteWrite []RemoteWrite `json:"remote_write,omitempty"`
	Promxy      Promxy        `json:"promxy"`
}

// Global is the Prometheus-style global section.
type Global struct {
	EvaluationInterval string            `json:"evaluation_interval"`
	ExternalLabels     map[string]string `json:"external_labels"`
}

// Alerting lists the Alertmanagers promxy sends alerts to.
type Alerting struct {
	Alertmanagers []Alertmanager `json:"alertmanagers"`
}

// Alertmanager is one Alertmanager endpoint set.
type Alertmanager struct {
	Scheme        string         `json:"scheme"`
	PathPrefix    string         `json:"path_prefix,omitempty"`
	StaticConfigs []StaticConfig `json:"static_configs"`
}

// RemoteWrite is one remote_write destination.
type RemoteWrite struct {
	URL string `json:"url"`
}

// Promxy is promxy's own section.
type Promxy struct {
	ServerGroups []ServerGroup `json:"server_groups"`
}

// StaticConfig is a static target list.
type StaticConfig struct {
	Targets []string `json:"targets"`
}

// ServerGroup is one promxy server group: a set of Prometheus-compatible targets queried together.
type ServerGroup struct {
	StaticConfigs []StaticConfig    `json:"static_configs"`
	PathPrefix    string            `json:"path_prefix,omitempty"`
	Scheme        string            `json:"scheme"`
	HTTPClient    *HTTPClient       `json:"http_client,omitempty"`
	Labels        map[string]string `json:"labels"`
	IgnoreError   bool              `json:"ignore_error"`
}

// HTTPClient is the HTTP client configuration of a server group.
type HTTPClient struct {
	DialTimeout string     `json:"dial_timeout,omitempty"`
	TLSConfig   *TLSConfig `json:"tls_config,omitempty"`
	BasicAuth   *BasicAuth `json:"basic_auth,omitempty"`
}

// TLSConfig is the TLS part of HTTPClient.
type TLSConfig struct {
	InsecureSkipVerify bool `json:"insecure_skip_verify"`
}

// BasicAuth carries the credentials promxy sends to a server group; the values come from the Secret a
// PromxyServerGroup references.
type BasicAuth struct {
	Username string `json:"username"`
	Password string `json:"password"`
}

// Options are the parts of the configuration that come from chart values rather than from PromxyServerGroups.
type Options struct {
	// AlertmanagerURL is the Alertmanager promxy sends alerts to, e.g. `http://kof-mothership-alertmanager:9093`;
	// "" leaves the alerting section out.
	AlertmanagerURL string
	// RemoteWriteURL is where promxy writes the results of recording rules; "" leaves remote_write out.
	RemoteWriteURL string
}

// Group is the input for one server group, taken from a PromxyServerGroup and its credential Secret.
type Group struct {
	// Namespace and Name identify the PromxyServerGroup; groups are ordered by them.
	Namespace, Name string
	// Cluster is spec.cluster_name; it becomes label promxyCluster (and Namespace promxyClusterNamespace).
	Cluster string
	// Targets are `host:port` entries (spec.targets).
	Targets []string
	// PathPrefix and Scheme are spec.path_prefix and spec.scheme (http or https).
	PathPrefix, Scheme string
	// DialTimeout is spec.http_client.dial_timeout, a Go duration string; "" leaves promxy's default.
	DialTimeout string
	// InsecureSkipVerify is spec.http_client.tls_config.insecure_skip_verify.
	InsecureSkipVerify bool
	// BasicAuth is read from the Secret named in spec.http_client.basic_auth; nil means no basic auth.
	BasicAuth *BasicAuth
}

// Validate returns every problem of g, each naming the PromxyServerGroup field and the fix; nil when g is usable.
func (g Group) Validate() []error {
	var errs []error
	if len(g.Targets) == 0 {
		errs = append(errs, errors.New("spec.targets: empty; set at least one host:port"))
	}
	for i, t := range g.Targets {
		if t == "" || strings.Contains(t, "/") {
			errs = append(errs, fmt.Errorf("spec.targets[%d]: %q is not host:port; put paths in spec.path_prefix", i, t))
		}
	}
	if g.Scheme != SchemeHTTP && g.Scheme != SchemeHTTPS {
		errs = append(errs, fmt.Errorf("spec.scheme: %q; use %q or %q", g.Scheme, SchemeHTTP, SchemeHTTPS))
	}
	if g.DialTimeout != "" {
		if d, err := time.ParseDuration(g.DialTimeout); err != nil || d <= 0 {
			errs = append(errs, fmt.Errorf("spec.http_client.dial_timeout: %q is not a positive duration such as 5s", g.DialTimeout))
		}
	}
	return errs
}

// Build returns the promxy configuration for opts and groups, with one server group per Group ordered by
// namespace then name, whatever the input order. It returns an error naming the group and field for each invalid
// group (see Group.Validate) or an unparsable Alertmanager URL; callers drop invalid groups before calling it.
func Build(opts Options, groups []Group) (Config, error) {
	var errs []error
	cfg := Config{
		Global: Global{
			EvaluationInterval: EvaluationInterval,
			ExternalLabels:     map[string]string{SourceLabel: SourceValue},
		},
		RuleFiles: []string{RuleFilesGlob},
		Promxy:    Promxy{ServerGroups: []ServerGroup{}},
	}
	if opts.AlertmanagerURL != "" {
		am, err := alertmanager(opts.AlertmanagerURL)
		if err != nil {
			errs = append(errs, err)
		}
		cfg.Alerting = &Alerting{Alertmanagers: []Alertmanager{am}}
	}
	if opts.RemoteWriteURL != "" {
		cfg.RemoteWrite = []RemoteWrite{{URL: opts.RemoteWriteURL}}
	}
	sorted := slices.Clone(groups)
	slices.SortFunc(sorted, func(a, b Group) int {
		if c := strings.Compare(a.Namespace, b.Namespace); c != 0 {
			return c
		}
		return strings.Compare(a.Name, b.Name)
	})
	for _, g := range sorted {
		if problems := g.Validate(); len(problems) > 0 {
			errs = append(errs, fmt.Errorf("PromxyServerGroup %s/%s: %w", g.Namespace, g.Name, errors.Join(problems...)))
			continue
		}
		cfg.Promxy.ServerGroups = append(cfg.Promxy.ServerGroups, serverGroup(g))
	}
	if len(errs) > 0 {
		return Config{}, errors.Join(errs...)
	}
	return cfg, nil
}

// serverGroup converts a valid Group into its server group.
func serverGroup(g Group) ServerGroup {
	sg := ServerGroup{
		StaticConfigs: []StaticConfig{{Targets: slices.Clone(g.Targets)}},
		PathPrefix:    g.PathPrefix,
		Scheme:        g.Scheme,
		Labels:        map[string]string{ClusterLabel: g.Cluster, ClusterNamespaceLabel: g.Namespace},
		IgnoreError:   true,
	}
	client := HTTPClient{DialTimeout: g.DialTimeout}
	if g.InsecureSkipVerify {
		client.TLSConfig = &TLSConfig{InsecureSkipVerify: true}
	}
	if g.BasicAuth != nil {
		auth := *g.BasicAuth
		client.BasicAuth = &auth
	}
	if client != (HTTPClient{}) {
		sg.HTTPClient = &client
	}
	return sg
}

// alertmanager splits an Alertmanager URL into the scheme, target and path prefix promxy expects.
func alertmanager(raw string) (Alertmanager, error) {
	u, err := url.Parse(raw)
	if err != nil || u.Host == "" || (u.Scheme != SchemeHTTP && u.Scheme != SchemeHTTPS) {
		return Alertmanager{}, fmt.Errorf("alertmanager URL %q: want http(s)://host:port[/path]", raw)
	}
	return Alertmanager{
		Scheme:        u.Scheme,
		PathPrefix:    strings.TrimSuffix(u.Path, "/"),
		StaticConfigs: []StaticConfig{{Targets: []string{u.Host}}},
	}, nil
}

// Marshal returns cfg as YAML; map keys are sorted, so equal configurations give equal bytes.
func Marshal(cfg Config) ([]byte, error) {
	out, err := yaml.Marshal(cfg)
	if err != nil {
		return nil, fmt.Errorf("marshal promxy config: %w", err)
	}
	return out, nil
}

// Render is Build followed by Marshal: the bytes of the `config.yaml` key of the promxy config Secret.
func Render(opts Options, groups []Group) ([]byte, error) {
	cfg, err := Build(opts, groups)
	if err != nil {
		return nil, err
	}
	return Marshal(cfg)
}
