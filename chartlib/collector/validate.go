package collector

import (
	"bytes"
	"context"
	"fmt"
	"maps"
	"os"
	"os/exec"
	"path/filepath"
	"sort"
	"strings"

	"sigs.k8s.io/yaml"
)

// standIns are the built components that take the place of a component whose module is not served, per kind, with
// a config they accept: only the rest of the config is then proven.
func standIns() map[Kind]standIn {
	return map[Kind]standIn{
		Receivers:  {typ: "otlp", config: map[string]any{"protocols": map[string]any{"http": map[string]any{}}}},
		Processors: {typ: "batch", config: map[string]any{}},
		Exporters:  {typ: "debug", config: map[string]any{}},
		Extensions: {typ: "health_check", config: map[string]any{}},
	}
}

type standIn struct {
	typ    string
	config map[string]any
}

// Validator runs `otelcol validate` of one KOF collector distribution (ci/tools/otelcol.sh builds it into
// bin/otelcol).
type Validator struct {
	// Binary is the path of the distribution's executable.
	Binary string
	// Release is the collector release the distribution was built at (Module.NotServed is read for it).
	Release string
	built   map[Kind]map[string]bool
}

// NewValidator takes the distribution's executable and returns a Validator, after asking the executable which
// components it has and its version (`otelcol components`; the release is the version up to its first `-`, as
// ci/tools/otelcol.sh stamps `<release>-<manifest hash>`). The error carries the executable's output.
func NewValidator(ctx context.Context, binary string) (*Validator, error) {
	out, err := exec.CommandContext(ctx, binary, "components").Output()
	if err != nil {
		return nil, fmt.Errorf("%s components: %w (build it with `make tools`)", binary, err)
	}
	var listed struct {
		BuildInfo struct {
			Version string `json:"version"`
		} `json:"buildinfo"`
		Receivers  []named `json:"receivers"`
		Processors []named `json:"processors"`
		Exporters  []named `json:"exporters"`
		Extensions []named `json:"extensions"`
		Connectors []named `json:"connectors"`
	}
	if err := yaml.Unmarshal(out, &listed); err != nil {
		return nil, fmt.Errorf("%s components: parse the component list: %w", binary, err)
	}
	release, _, _ := strings.Cut(listed.BuildInfo.Version, "-")
	if !releasePattern.MatchString(release) {
		return nil, fmt.Errorf("%s components: version %q does not start with a collector release", binary,
			listed.BuildInfo.Version)
	}
	v := &Validator{Binary: binary, Release: release, built: map[Kind]map[string]bool{}}
	for k, list := range map[Kind][]named{Receivers: listed.Receivers, Processors: listed.Processors,
		Exporters: listed.Exporters, Extensions: listed.Extensions, Connectors: listed.Connectors} {
		v.built[k] = map[string]bool{}
		for _, c := range list {
			v.built[k][c.Name] = true
		}
	}
	return v, nil
}

// named is one entry of `otelcol components`.
type named struct {
	Name string `json:"name"`
}

// Built reports whether the distribution has the component type typ of kind k.
func (v *Validator) Built(k Kind, typ string) bool { return v.built[k][typ] }

// Result is what Validate proved.
type Result struct {
	// Unverified names each component of the config that the distribution could not check (its module is not
	// served at the release), as `kind/id`, with a stand-in in its place; the rest of the config was validated.
	Unverified []string
}

// Validate runs `otelcol validate` on c as the collector container would start on a node: with c.Env as its only
// environment, c.Mounts as folders of a scratch node (OnNode) and a stand-in service account (podCommand). A component whose module is not served at the release (Module.NotServed)
// is replaced by a built stand-in of its kind, under a derived name, in its section and every reference, and named
// in Result.Unverified. Every other component is validated as rendered: an unknown type, a bad field or a broken
// pipeline reference is an error naming c.Source and carrying the collector's message.
func (v *Validator) Validate(ctx context.Context, c Config) (Result, error) {
	body, unverified, err := v.standIn(c)
	if err != nil {
		return Result{}, err
	}
	dir, err := os.MkdirTemp("", "otelcol-validate-")
	if err != nil {
		return Result{}, fmt.Errorf("%s: %w", c.Source, err)
	}
	defer os.RemoveAll(dir)
	body, err = OnNode(body, c.Mounts, c.Env, filepath.Join(dir, "node"))
	if err != nil {
		return Result{}, fmt.Errorf("%s: %w", c.Source, err)
	}
	data, err := yaml.Marshal(body)
	if err != nil {
		return Result{}, fmt.Errorf("%s: encode config: %w", c.Source, err)
	}
	file := filepath.Join(dir, "config.yaml")
	if err := os.WriteFile(file, data, 0o600); err != nil {
		return Result{}, fmt.Errorf("%s: %w", c.Source, err)
	}
	sa := filepath.Join(dir, "serviceaccount")
	if err := writeServiceAccount(sa); err != nil {
		return Result{}, fmt.Errorf("%s: %w", c.Source, err)
	}
	cmd := podCommand(ctx, sa, c.Env, v.Binary, "validate", "--config=file:"+file)
	var out bytes.Buffer
	cmd.Stdout, cmd.Stderr = &out, &out
	if err := cmd.Run(); err != nil {
		return Result{Unverified: unverified}, fmt.Errorf("%s: otelcol validate: %w\n%s", c.Source, err,
			strings.TrimSpace(out.String()))
	}
	return Result{Unverified: unverified}, nil
}

// standIn returns a copy of c's body with every not-served component replaced (see Validate) and their names.
func (v *Validator) standIn(c Config) (map[string]any, []string, error) {
	body := maps.Clone(c.Body)
	renames := map[string]string{}
	var unverified []string
	for _, k := range Kinds() {
		section, _ := body[string(k)].(map[string]any)
		ids := make([]string, 0, len(section))
		for id := range section {
			ids = append(ids, id)
		}
		sort.Strings(ids)
		cloned := false
		for _, id := range ids {
			if v.Built(k, TypeOf(id)) || v.served(k, TypeOf(id)) {
				continue
			}
			s, ok := standIns()[k]
			if !ok {
				return nil, nil, fmt.Errorf("%s: %s/%s is not built (not served at %s) and %s have no stand-in",
					c.Source, k, id, v.Release, k)
			}
			if !cloned {
				section = maps.Clone(section)
				body[string(k)] = section
				cloned = true
			}
			to := s.typ + "/unverified-" + strings.ReplaceAll(id, "/", "-")
			delete(section, id)
			section[to] = s.config
			renames[id] = to
			unverified = append(unverified, string(k)+"/"+id)
		}
	}
	if len(renames) > 0 {
		body["service"] = renameRefs(body["service"], renames)
	}
	return body, unverified, nil
}

// served reports whether a component type missing from the distribution should have been built: it has no module
// row, or its module is served at the release (then the collector must reject it, e.g. a planted unknown type).
func (v *Validator) served(k Kind, typ string) bool {
	for _, m := range Modules() {
		if m.Kind == k && m.Type == typ {
			return m.ServedAt(v.Release)
		}
	}
	return true
}

// renameRefs returns a copy of the service section with the component references renamed: service.extensions and
// every pipeline's receivers, processors and exporters.
func renameRefs(service any, renames map[string]string) any {
	s, ok := service.(map[string]any)
	if !ok {
		return service
	}
	s = maps.Clone(s)
	rename := func(list any) any {
		items, ok := list.([]any)
		if !ok {
			return list
		}
		out := make([]any, len(items))
		for i, it := range items {
			out[i] = it
			if name, ok := it.(string); ok && renames[name] != "" {
				out[i] = renames[name]
			}
		}
		return out
	}
	if ext, ok := s["extensions"]; ok {
		s["extensions"] = rename(ext)
	}
	if pipelines, ok := s["pipelines"].(map[string]any); ok {
		out := map[string]any{}
		for name, p := range pipelines {
			pm, ok := p.(map[string]any)
			if !ok {
				out[name] = p
				continue
			}
			pm = maps.Clone(pm)
			for _, role := range []string{"receivers", "processors", "exporters"} {
				if refs, ok := pm[role]; ok {
					pm[role] = rename(refs)
				}
			}
			out[name] = pm
		}
		s["pipelines"] = out
	}
	return s
}
