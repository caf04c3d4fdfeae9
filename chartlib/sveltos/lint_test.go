package sveltos

import (
	"strings"
	"testing"

	"github.com/google/go-cmp/cmp"
)

func TestLint(t *testing.T) {
	cases := []struct {
		name, values string
		want         []Rule // rules in line order
		lines        []int
	}{
		{
			name:   "clean multi-line values",
			values: "a:\n  b: {{ .Cluster.metadata.name }}\n  c: {{ .Cluster.metadata.labels | toJson }}\n",
		},
		{
			name:   "trailing space and a quoted string in an action",
			values: "a: {{ index .Cluster.metadata.labels \"x\" }} \nb: 1\n",
			want:   []Rule{RuleTrailingSpace, RuleQuoteInAction},
			lines:  []int{1, 1},
		},
		{
			name:   "tab at line start",
			values: "a:\n\tb: 1\n",
			want:   []Rule{RuleTabIndent},
			lines:  []int{2},
		},
		{
			name:   "carriage returns",
			values: "a: 1\r\nb: 2\n",
			want:   []Rule{RuleCarriageReturn},
			lines:  []int{1},
		},
		{
			name:   "single-line values with an action",
			values: "name: {{ .Cluster.metadata.name }}",
			want:   []Rule{RuleSingleLine},
			lines:  []int{1},
		},
		{
			name:   "multi-line output nested under literal text",
			values: "a:\n  b: {{ .Cluster.metadata.labels | toYaml | nindent 4 }}\n",
			want:   []Rule{RuleMultilineOutput},
			lines:  []int{2},
		},
		{
			name:   "a raw string over two lines, only assigned",
			values: "{{ $kof := fromJson `{\n  \"a\": 1}` }}\n{{- if hasKey $kof \"Error\" }}{{ fail \"x\" }}{{ end }}\nb: {{ $kof.a }}\n",
			want:   []Rule{RuleMultilineString},
			lines:  []int{1},
		},
		{
			name:   "a raw string over two lines, printed",
			values: "a: |\n  {{ `x\ny` }}\n",
			want:   []Rule{RuleMultilineString},
			lines:  []int{2},
		},
		{
			name:   "a dict literal over several lines (the KOF hand-off) is clean",
			values: "{{/* data */}}\n{{- $kof := (dict\n  \"a\" (list\n    1\n    \"x\\ny\"\n  )\n) }}\n{{- toJson $kof }}\n",
		},
		{
			name:   "multi-line output at line start",
			values: "a:\n{{ .Cluster.metadata.labels | toYaml | indent 2 }}\n",
			want:   []Rule{RuleMultilineOutput},
			lines:  []int{2},
		},
		{
			name:   "Helm-only functions",
			values: "a: {{ include \"x\" . }}\nb: {{ tpl \"y\" . }}\nc: {{ required \"m\" .Cluster.kind }}\nd: {{ (lookup \"v1\" \"Secret\" \"a\" \"b\").data }}\n",
			want:   []Rule{RuleHelmOnly, RuleHelmOnly, RuleHelmOnly, RuleHelmOnly},
			lines:  []int{1, 2, 3, 4},
		},
		{
			name:   "Helm data fields",
			values: "a: {{ .Values.x }}\nb: {{ $.Release.Name }}\n",
			want:   []Rule{RuleDataField, RuleDataField},
			lines:  []int{1, 2},
		},
		{
			name:   "fromYaml result never checked",
			values: "{{- $v := fromYaml (index .Cluster.metadata.annotations \"k\") }}\na: {{ $v.a }}\n",
			want:   []Rule{RuleUncheckedFromYaml},
			lines:  []int{1},
		},
		{
			name:   "fromYaml result used directly",
			values: "a: {{ (fromYaml \"x: 1\").x }}\n",
			want:   []Rule{RuleUncheckedFromYaml},
			lines:  []int{1},
		},
		{
			name:   "fromYaml checked with $v.Error, which fails on good input",
			values: "{{- $v := fromYaml \"x: 1\" }}\n{{- if $v.Error }}{{ fail $v.Error }}{{ end }}\na: {{ $v.x }}\n",
			want:   []Rule{RuleUncheckedFromYaml, RuleErrorField, RuleErrorField},
			lines:  []int{1, 2, 2},
		},
		{
			name:   "fromYaml checked with hasKey",
			values: "{{- $v := fromYaml \"x: 1\" }}\n{{- if hasKey $v \"Error\" }}{{ fail (get $v \"Error\") }}{{ end }}\na: {{ $v.x }}\n",
		},
		{
			name:   ".Error read inside with",
			values: "{{- $v := fromYaml \"x: 1\" }}\n{{- with $v }}{{ if .Error }}{{ fail \"bad\" }}{{ end }}{{ end }}\na: 1\n",
			want:   []Rule{RuleUncheckedFromYaml, RuleErrorField},
			lines:  []int{1, 2},
		},
		{
			name:   "hasKey on .MgmtResources",
			values: "a: {{ hasKey .MgmtResources \"ChildConfig\" }}\nb: {{ with index .MgmtResources \"ChildConfig\" }}1{{ end }}\n",
			want:   []Rule{RuleMgmtHasKey},
			lines:  []int{1},
		},
		{
			name:   "string with a line break in an action",
			values: "a:\n  b: {{ \"x\\ny\" }}\n",
			want:   []Rule{RuleMultilineOutput},
			lines:  []int{2},
		},
		{
			name:   "control character makes the text double-quoted",
			values: "a: \x01\nb: 2\n",
			want:   []Rule{RuleQuotedScalar},
			lines:  []int{1},
		},
		{
			name:   "fromJson checked with hasKey",
			values: "{{- $v := fromJson \"{}\" }}\n{{- if hasKey $v \"Error\" }}{{ fail \"bad\" }}{{ end }}\na: 1\n",
		},
		{
			name:   "escaped delimiters",
			values: "a: '{{ \"{{\" }} x'\nb: 1\n",
			want:   []Rule{RuleEscapedDelims},
			lines:  []int{1},
		},
		{
			name:   "unparsable template",
			values: "a: 1\nb: {{ .Cluster.metadata.name\n",
			want:   []Rule{RuleParse},
			lines:  []int{2},
		},
	}
	for _, tc := range cases {
		t.Run(tc.name, func(t *testing.T) {
			got := Lint(tc.values)
			var rules []Rule
			var lines []int
			for _, f := range got {
				rules = append(rules, f.Rule)
				lines = append(lines, f.Line)
			}
			if diff := cmp.Diff(tc.want, rules); diff != "" {
				t.Errorf("rules (-want +got):\n%s\nfindings: %v", diff, got)
			}
			if diff := cmp.Diff(tc.lines, lines); diff != "" {
				t.Errorf("lines (-want +got):\n%s", diff)
			}
		})
	}
}

func TestErrorFieldFailsOnGoodInput(t *testing.T) {
	values := "{{- $v := fromYaml \"x: 1\" }}\n{{- if $v.Error }}{{ fail \"bad\" }}{{ end }}\na: 1\n"
	if e := mustFail(t, input(t, values, SinglePass)); !strings.Contains(e.Error(), `map has no entry for key "Error"`) {
		t.Errorf("error %q, want the missingkey failure on .Error", e)
	}
}

func TestFindingString(t *testing.T) {
	f := Finding{Line: 3, Rule: RuleTabIndent, Message: "tab"}
	if got := f.String(); got != "line 3: tab-indent: tab" {
		t.Errorf("String() = %q", got)
	}
}

func TestLintFlagsFromYamlWhoseErrorInstantiateHides(t *testing.T) {
	// The unchecked fromYaml of a malformed annotation renders "Error" into the values without failing.
	values := "{{- $o := fromYaml (index .Cluster.metadata.annotations \"k0rdent.mirantis.com/kof-regional-domain\") }}\ncollectors: {{ $o | toJson }}\n"
	in := input(t, values, DoublePass)
	in.Cluster.SetAnnotations(map[string]string{"k0rdent.mirantis.com/kof-regional-domain": "{bad"})
	res := mustInstantiate(t, in)
	collectors, _ := res.Values["collectors"].(map[string]any)
	if msg, _ := collectors["Error"].(string); !strings.Contains(msg, "yaml") {
		t.Errorf("collectors = %v, want an Error key from fromYaml", res.Values["collectors"])
	}
	if !hasRule(Lint(values), RuleUncheckedFromYaml, 1) {
		t.Errorf("Lint = %v, want %s at line 1", Lint(values), RuleUncheckedFromYaml)
	}
}
