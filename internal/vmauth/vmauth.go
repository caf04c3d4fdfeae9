// Package vmauth translates VMUser objects into the vmauth configuration (`-auth.config`) the VictoriaMetrics
// operator writes for them, so that the routes and credentials KOF's operator puts in its VMUsers can be served by a
// real vmauth. Only static target references are translated (KOF's VMUsers use nothing else); a `crd` reference
// needs the live objects it names and is an error.
//
// Source: the VictoriaMetrics operator's VMUser documentation (docs/resources/vmuser.md, "Routing") and vmauth's
// `url_map` documentation (https://docs.victoriametrics.com/victoriametrics/vmauth/#generic-http-proxy-for-different-backends):
// every targetRef becomes one url_map entry whose url_prefix is the static URL with targetPathSuffix joined to its
// path and queryArgs merged into its query; `paths` become src_paths (`/` and `/*` mean `/.*`, none means `/.*`);
// hosts, headers, response headers, retry status codes, load balancing policy and drop_src_path_prefix_parts are
// copied; one targetRef with no path or a catch-all path becomes the user's own url_prefix instead of a url_map.
package vmauth

import (
	"encoding/json"
	"fmt"
	"net/url"
	"path"

	vmv1beta1 "github.com/VictoriaMetrics/operator/api/operator/v1beta1"
	"sigs.k8s.io/yaml"

	"kof.dev/kof/operator/vmapi"
)

// Upstream takes a VMUser as the kof-operator writes it (operator/vmapi, KOF's fields only) and returns it as the
// VictoriaMetrics operator's own type, through its JSON, so that what is translated is what the VictoriaMetrics
// operator would read. The error is the JSON encoder's or decoder's.
func Upstream(u *vmapi.VMUser) (*vmv1beta1.VMUser, error) {
	b, err := json.Marshal(u)
	if err != nil {
		return nil, fmt.Errorf("encode VMUser %s/%s: %w", u.Namespace, u.Name, err)
	}
	out := &vmv1beta1.VMUser{}
	if err := json.Unmarshal(b, out); err != nil {
		return nil, fmt.Errorf("decode VMUser %s/%s as the VictoriaMetrics operator's type: %w", u.Namespace, u.Name, err)
	}
	return out, nil
}

// User is one VMUser with the password its passwordRef Secret holds.
type User struct {
	VMUser   *vmv1beta1.VMUser
	Password string
}

// Config is a vmauth `-auth.config` file.
type Config struct {
	Users []UserConfig `json:"users"`
}

// UserConfig is one entry of `users`.
type UserConfig struct {
	Name        string     `json:"name,omitempty"`
	Username    string     `json:"username,omitempty"`
	Password    string     `json:"password,omitempty"`
	BearerToken string     `json:"bearer_token,omitempty"`
	URLPrefix   []string   `json:"url_prefix,omitempty"`
	URLMap      []URLMap   `json:"url_map,omitempty"`
	Headers     []string   `json:"headers,omitempty"`
	DropParts   *int       `json:"drop_src_path_prefix_parts,omitempty"`
	LoadBalance *string    `json:"load_balancing_policy,omitempty"`
	Retry       []int      `json:"retry_status_codes,omitempty"`
	IPFilters   *ipFilters `json:"ip_filters,omitempty"`
}

type ipFilters struct {
	AllowList []string `json:"allow_list,omitempty"`
	DenyList  []string `json:"deny_list,omitempty"`
}

// URLMap is one route of a user.
type URLMap struct {
	SrcPaths        []string `json:"src_paths,omitempty"`
	SrcHosts        []string `json:"src_hosts,omitempty"`
	SrcHeaders      []string `json:"src_headers,omitempty"`
	SrcQueryArgs    []string `json:"src_query_args,omitempty"`
	URLPrefix       []string `json:"url_prefix"`
	Headers         []string `json:"headers,omitempty"`
	ResponseHeaders []string `json:"response_headers,omitempty"`
	RetryStatus     []int    `json:"retry_status_codes,omitempty"`
	DropParts       *int     `json:"drop_src_path_prefix_parts,omitempty"`
	LoadBalance     *string  `json:"load_balancing_policy,omitempty"`
	DiscoverIPs     *bool    `json:"discover_backend_ips,omitempty"`
}

// Translate takes VMUsers with their passwords and returns the vmauth config, users in the order given. A user
// without a usable route, with a crd reference or with an unparsable URL is an error naming the VMUser; all such
// errors are reported at once.
func Translate(users []User) (*Config, error) {
	cfg := &Config{}
	var errs []error
	for _, u := range users {
		uc, err := user(u)
		if err != nil {
			errs = append(errs, fmt.Errorf("VMUser %s/%s: %w", u.VMUser.Namespace, u.VMUser.Name, err))
			continue
		}
		cfg.Users = append(cfg.Users, uc)
	}
	if len(errs) > 0 {
		return nil, fmt.Errorf("translate VMUsers into a vmauth config: %v", errs)
	}
	return cfg, nil
}

// YAML returns the config as the `-auth.config` file.
func (c *Config) YAML() ([]byte, error) {
	b, err := yaml.Marshal(c)
	if err != nil {
		return nil, fmt.Errorf("encode vmauth config: %w", err)
	}
	return b, nil
}

func user(u User) (UserConfig, error) {
	s := u.VMUser.Spec
	uc := UserConfig{Password: u.Password, DropParts: s.DropSrcPathPrefixParts, LoadBalance: s.LoadBalancingPolicy,
		Retry: s.RetryStatusCodes, Headers: s.Headers}
	if s.Name != nil {
		uc.Name = *s.Name
	}
	switch {
	case s.BearerToken != nil:
		uc.BearerToken, uc.Password = *s.BearerToken, ""
	case s.Username != nil && *s.Username != "":
		uc.Username = *s.Username
	default:
		uc.Username = u.VMUser.Name
	}
	if len(s.IPFilters.AllowList)+len(s.IPFilters.DenyList) > 0 {
		uc.IPFilters = &ipFilters{AllowList: s.IPFilters.AllowList, DenyList: s.IPFilters.DenyList}
	}
	refs := s.TargetRefs
	if len(refs) == 0 {
		return uc, fmt.Errorf("spec.targetRefs is empty: a user needs at least one route")
	}
	if len(refs) == 1 && catchAll(refs[0].Paths) {
		prefixes, err := urlPrefixes(refs[0])
		if err != nil {
			return uc, fmt.Errorf("spec.targetRefs[0]: %w", err)
		}
		uc.URLPrefix = prefixes
		if refs[0].DropSrcPathPrefixParts != nil {
			uc.DropParts = refs[0].DropSrcPathPrefixParts
		}
		return uc, nil
	}
	for i, ref := range refs {
		prefixes, err := urlPrefixes(ref)
		if err != nil {
			return uc, fmt.Errorf("spec.targetRefs[%d]: %w", i, err)
		}
		paths := ref.Paths
		if len(paths) == 0 || (len(paths) == 1 && (paths[0] == "/" || paths[0] == "/*")) {
			paths = []string{"/.*"}
		}
		uc.URLMap = append(uc.URLMap, URLMap{
			SrcPaths: paths, SrcHosts: ref.Hosts, SrcHeaders: ref.SrcHeaders, SrcQueryArgs: ref.SrcQueryArgs,
			URLPrefix: prefixes, Headers: ref.RequestHeaders, ResponseHeaders: ref.ResponseHeaders,
			RetryStatus: ref.RetryStatusCodes, DropParts: ref.DropSrcPathPrefixParts,
			LoadBalance: ref.LoadBalancingPolicy, DiscoverIPs: ref.DiscoverBackendIPs,
		})
	}
	return uc, nil
}

// catchAll reports whether paths route everything (none, `/`, `/*` or `/.*`).
func catchAll(paths []string) bool {
	return len(paths) == 0 || (len(paths) == 1 && (paths[0] == "/" || paths[0] == "/*" || paths[0] == "/.*"))
}

// urlPrefixes returns the backend URLs of a static reference with its path suffix and query args applied.
func urlPrefixes(ref vmv1beta1.TargetRef) ([]string, error) {
	if ref.CRD != nil {
		return nil, fmt.Errorf("crd reference %s/%s: only static references can be translated offline",
			ref.CRD.Kind, ref.CRD.Name)
	}
	if ref.Static == nil || (ref.Static.URL == "" && len(ref.Static.URLs) == 0) {
		return nil, fmt.Errorf("static.url and static.urls are empty; set one")
	}
	urls := ref.Static.URLs
	if ref.Static.URL != "" {
		urls = []string{ref.Static.URL}
	}
	out := make([]string, 0, len(urls))
	for _, raw := range urls {
		u, err := url.Parse(raw)
		if err != nil {
			return nil, fmt.Errorf("static URL %q: %w", raw, err)
		}
		if ref.TargetPathSuffix != "" || len(ref.QueryArgs) > 0 {
			suffix, err := url.Parse(ref.TargetPathSuffix)
			if err != nil {
				return nil, fmt.Errorf("targetPathSuffix %q: %w", ref.TargetPathSuffix, err)
			}
			if u.Path != "" || suffix.Path != "" {
				u.Path = path.Join(u.Path, suffix.Path)
			}
			q := u.Query()
			for k, v := range suffix.Query() {
				q[k] = v
			}
			for _, a := range ref.QueryArgs {
				q[a.Name] = a.Values
			}
			u.RawQuery = q.Encode()
		}
		out = append(out, u.String())
	}
	return out, nil
}
