package webui

import (
	"bytes"
	"fmt"
	"html/template"
	"net/http"
	"net/url"
	"strings"
	"time"

	"kof.dev/kof/doctor/diagnose"
)

// Pages of the UI: the template of each, under templates/.
const (
	pageFleet   = "fleet"
	pageCluster = "cluster"
	pageStorage = "storage"
	pageRules   = "rules"
)

// view is what every page template receives.
type view struct {
	// Page is the page's name (for the navigation), Title its heading.
	Page, Title string
	// Source and ReadAt say which cluster was read and when.
	Source string
	ReadAt time.Time
	// Refresh is the current page's URL with the refresh parameter.
	Refresh   string
	Diagnosis *diagnose.Diagnosis
	// Cluster is the cluster of the detail page.
	Cluster *diagnose.Cluster
	// Findings are the findings the page lists.
	Findings []diagnose.Finding
}

// funcs are the template helpers.
func funcs() template.FuncMap {
	return template.FuncMap{
		"clusterURL": func(c *diagnose.Cluster) string {
			return PathCluster + url.PathEscape(c.Namespace) + "/" + url.PathEscape(c.Name)
		},
		"dirURL": func(d *diagnose.Diagnosis, dir string) string {
			for _, c := range d.Clusters {
				if c.Dir == dir {
					return PathCluster + url.PathEscape(c.Namespace) + "/" + url.PathEscape(c.Name)
				}
			}
			return ""
		},
		"count": func(fs []diagnose.Finding, sev string) int {
			n := 0
			for _, f := range fs {
				if string(f.Severity) == sev {
					n++
				}
			}
			return n
		},
		"stateClass": func(s string) string {
			switch s {
			case "Deployed", diagnose.StateOK, "True":
				return "ok"
			case "Failed", string(diagnose.SeverityError), "False":
				return "error"
			case string(diagnose.SeverityWarning), "Provisioning", "Pending", "Deleting":
				return "warning"
			}
			return "unknown"
		},
		"origins": diagnose.Origins,
		"states": func(ss []diagnose.Service) string {
			n := map[string]int{}
			var order []string
			for _, s := range ss {
				if n[s.State] == 0 {
					order = append(order, s.State)
				}
				n[s.State]++
			}
			parts := make([]string, 0, len(order))
			for _, st := range order {
				parts = append(parts, fmt.Sprintf("%d %s", n[st], st))
			}
			return strings.Join(parts, ", ")
		},
		"yesno": func(b bool) string {
			if b {
				return "yes"
			}
			return "no"
		},
		"when": func(t time.Time) string {
			if t.IsZero() {
				return ""
			}
			return t.UTC().Format("2006-01-02 15:04:05Z")
		},
	}
}

// parsePages parses every page with the shared layout.
func parsePages() (*template.Template, error) {
	t, err := template.New("pages").Funcs(funcs()).ParseFS(assets, "templates/*.html")
	if err != nil {
		return nil, fmt.Errorf("webui: parse templates: %w", err)
	}
	for _, p := range []string{pageFleet, pageCluster, pageStorage, pageRules} {
		if t.Lookup(p) == nil {
			return nil, fmt.Errorf("webui: no template %q", p)
		}
	}
	return t, nil
}

// page returns the handler of one page.
func (s *Server) page(name string) http.HandlerFunc {
	return func(w http.ResponseWriter, r *http.Request) {
		d, at, err := s.diagnosis(r.Context(), r.URL.Query().Has(refreshParam))
		if err != nil {
			http.Error(w, "cannot read the management cluster: "+err.Error(), http.StatusBadGateway)
			return
		}
		q := url.Values{refreshParam: {"1"}}
		v := view{Page: name, Source: s.Source, ReadAt: at, Diagnosis: d, Refresh: r.URL.Path + "?" + q.Encode()}
		switch name {
		case pageFleet:
			v.Title, v.Findings = "Fleet", d.AllFindings()
		case pageCluster:
			key := r.PathValue("namespace") + "/" + r.PathValue("name")
			if v.Cluster = d.Cluster(key); v.Cluster == nil {
				http.Error(w, "no cluster "+key, http.StatusNotFound)
				return
			}
			v.Title, v.Findings = v.Cluster.Name, v.Cluster.Findings
		case pageStorage:
			v.Title = "Storage"
		case pageRules:
			v.Title = "Rules"
		}
		var buf bytes.Buffer
		if err := s.pages.ExecuteTemplate(&buf, name, v); err != nil {
			http.Error(w, "render page: "+err.Error(), http.StatusInternalServerError)
			return
		}
		w.Header().Set("Content-Type", "text/html; charset=utf-8")
		_, _ = w.Write(buf.Bytes())
	}
}
