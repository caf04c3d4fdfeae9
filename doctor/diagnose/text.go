package diagnose

import (
	"fmt"
	"io"
	"net/url"
	"sort"
	"strings"
	"text/tabwriter"
)

// CountSeverity returns how many of fs have severity sev.
func CountSeverity(fs []Finding, sev Severity) int {
	n := 0
	for _, f := range fs {
		if f.Severity == sev {
			n++
		}
	}
	return n
}

// WriteText prints the text form of a diagnosis that `kof doctor` shows and the support bundle stores: the cluster
// table (CLUSTER, ROLE, REGIONAL, ENDPOINTS, SERVICES, STATE), then every finding as `<severity> <cluster>:
// <message> [<code>]`, the object and field on the next line, the fix on the one after. It returns the first write
// error.
func WriteText(w io.Writer, clusters []*Cluster, findings []Finding) error {
	tw := tabwriter.NewWriter(w, 0, 4, 2, ' ', 0)
	fmt.Fprintln(tw, "CLUSTER\tROLE\tREGIONAL\tENDPOINTS\tSERVICES\tSTATE")
	for _, c := range clusters {
		fmt.Fprintf(tw, "%s\t%s\t%s\t%s\t%s\t%s\n", c.Dir, c.Role, dash(c.Regional), dash(origin(c.Endpoints)),
			serviceStates(c.Services), c.State())
	}
	if err := tw.Flush(); err != nil {
		return fmt.Errorf("write table: %w", err)
	}
	fmt.Fprintf(w, "\n%d findings: %d errors, %d warnings, %d info\n", len(findings),
		CountSeverity(findings, SeverityError), CountSeverity(findings, SeverityWarning),
		CountSeverity(findings, SeverityInfo))
	for _, f := range findings {
		where := f.Cluster
		if where == "" {
			where = "fleet"
		}
		fmt.Fprintf(w, "%-7s %s: %s [%s]\n", f.Severity, where, f.Message, f.Code)
		if f.Object != "" || f.Field != "" {
			fmt.Fprintf(w, "        %s\n", strings.TrimSpace(f.Object+" "+f.Field))
		}
		if _, err := fmt.Fprintf(w, "        fix: %s\n", f.Fix); err != nil {
			return fmt.Errorf("write findings: %w", err)
		}
	}
	return nil
}

func dash(s string) string {
	if s == "" {
		return "-"
	}
	return s
}

// origin returns the distinct `scheme://host` of the write endpoints, comma separated.
func origin(eps []Endpoint) string { return strings.Join(Origins(eps), ",") }

// Origins returns the distinct `scheme://host` of the write endpoints, in order; endpoints without a host are left
// out.
func Origins(eps []Endpoint) []string {
	seen := map[string]bool{}
	var out []string
	for _, e := range eps {
		u, err := url.Parse(e.Write)
		if err != nil || u.Host == "" {
			continue
		}
		if o := u.Scheme + "://" + u.Host; !seen[o] {
			seen[o] = true
			out = append(out, o)
		}
	}
	return out
}

// serviceStates summarises service states, e.g. `4: 3 Deployed, 1 Failed` or `2: not reported`.
func serviceStates(ss []Service) string {
	if len(ss) == 0 {
		return "0"
	}
	n := map[string]int{}
	for _, s := range ss {
		n[s.State]++
	}
	states := make([]string, 0, len(n))
	for st := range n {
		states = append(states, st)
	}
	sort.Strings(states)
	parts := make([]string, 0, len(states))
	for _, st := range states {
		if len(states) == 1 {
			parts = append(parts, st)
		} else {
			parts = append(parts, fmt.Sprintf("%d %s", n[st], st))
		}
	}
	return fmt.Sprintf("%d: %s", len(ss), strings.Join(parts, ", "))
}
