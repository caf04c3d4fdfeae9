package sveltos

import (
	"fmt"
	"slices"
	"strings"
	"text/template/parse"

	"sigs.k8s.io/yaml"
)

// Rule names one hazard Lint reports.
type Rule string

// The hazards of a values text evaluated by Sveltos (see the package documentation, "The double pass").
const (
	// RuleTrailingSpace: a line ends with a space or tab, so pass 1 writes the whole text as a double-quoted scalar.
	RuleTrailingSpace Rule = "trailing-space"
	// RuleTabIndent: a line starts with a tab (YAML forbids tab indentation; pass 1 double-quotes the text).
	RuleTabIndent Rule = "tab-indent"
	// RuleCarriageReturn: the text contains a CR (pass 1 double-quotes the text).
	RuleCarriageReturn Rule = "carriage-return"
	// RuleQuotedScalar: a multi-line text that pass 1 double-quotes for another reason than trailing spaces,
	// tabs or CRs (control or special characters), with the same consequences.
	RuleQuotedScalar Rule = "quoted-scalar"
	// RuleQuoteInAction: a "..." string inside an action of a text that pass 1 double-quotes: pass 1 escapes
	// the quote and the template no longer parses.
	RuleQuoteInAction Rule = "quote-in-action"
	// RuleSingleLine: a single-line text with an action becomes a single-quoted or plain scalar in pass 1: an
	// action whose output contains ' (or ": ") truncates or breaks it.
	RuleSingleLine Rule = "single-line-values"
	// RuleMultilineOutput: an action whose output spans several lines (nindent, indent, toYaml, copy, ...).
	// Pass 1 executes the text inside a YAML literal block indented by 2, so the output's continuation lines land
	// 2 columns left of where they are written, or end the block and are silently lost. This holds after
	// literal text on a line (`b: {{ x | toYaml | nindent 4 }}`) and at line start alike (measured with the
	// libraries Sveltos uses). Single-line flow output (toJson) is safe.
	RuleMultilineOutput Rule = "multiline-output"
	// RuleMultilineString: a string literal written over several lines inside an action (a raw `...` string with
	// line breaks). Pass 1 executes the text inside a YAML block indented by 2, so every continuation line of the
	// literal gains 2 spaces: the string differs between the passes, whether it is printed or only assigned.
	// Write each literal on one line (escape line breaks as \n in a "..." string).
	RuleMultilineString Rule = "multiline-string"
	// RuleEscapedDelims: an action outputs "{{" or "}}" (e.g. {{ "{{" }}): pass 1 consumes the escape and pass 2
	// executes what it produced; only a double escape survives the double pass.
	RuleEscapedDelims Rule = "escaped-delimiters"
	// RuleHelmOnly: include, tpl, required or lookup do not exist in Sveltos: the template fails to parse.
	RuleHelmOnly Rule = "helm-only-function"
	// RuleDataField: .Values, .Release, .Chart, ... do not exist; the data has only .Cluster,
	// .InfrastructureProvider, .KubeadmControlPlane and .MgmtResources.
	RuleDataField Rule = "unknown-data-field"
	// RuleUncheckedFromYaml: the result of fromYaml/fromJson/fromToml is used without checking its Error key,
	// so bad input silently becomes {"Error": "..."}.
	RuleUncheckedFromYaml Rule = "unchecked-from-yaml"
	// RuleErrorField: $v.Error read on a fromYaml result: with missingkey=error it fails whenever parsing
	// succeeded (the key is absent); test hasKey $v "Error" instead.
	RuleErrorField Rule = "error-field-access"
	// RuleMgmtHasKey: hasKey .MgmtResources fails at execution (.MgmtResources is map[string]map[string]any,
	// sprig's hasKey takes map[string]any); test an optional reference with index or getResource.
	RuleMgmtHasKey Rule = "hasKey-mgmt-resources"
	// RuleParse: the text is not a valid template.
	RuleParse Rule = "parse"
)

// Finding is one hazard at one line (1-based) of the linted text.
type Finding struct {
	Line    int
	Rule    Rule
	Message string
}

// String formats the finding as "line N: rule: message".
func (f Finding) String() string { return fmt.Sprintf("line %d: %s: %s", f.Line, f.Rule, f.Message) }

// helmOnly are the Helm template functions Sveltos lacks.
func helmOnly() []string { return []string{"include", "tpl", "required", "lookup"} }

// builtins are text/template's predefined functions.
func builtins() []string {
	return []string{"and", "call", "html", "index", "slice", "js", "len", "not", "or", "print", "printf", "println",
		"urlquery", "eq", "ge", "gt", "le", "lt", "ne"}
}

// helmData are top-level fields of Helm's template data that Sveltos' data does not have.
func helmData() []string {
	return []string{"Values", "Release", "Chart", "Capabilities", "Template", "Files", "ControlPlane"}
}

// multiline are functions whose output usually spans several lines.
func multiline() []string {
	return []string{"nindent", "indent", "toYaml", "toToml", "toPrettyJson", "copy", "setField", "removeField"}
}

// fromFuncs are the parsers that report bad input through an Error key instead of failing.
func fromFuncs() []string { return []string{"fromYaml", "fromJson", "fromToml"} }

// Lint reports the parts of an MCS service's values text that Sveltos evaluates differently from what the text
// suggests, chiefly under the double pass of Sveltos v1.0.1-v1.15, plus functions and fields Sveltos lacks and
// unchecked fromYaml results. Findings are ordered by line. Lint never fails: an unparsable text is one
// RuleParse finding. Source: docs/sveltos.md; addon-controller controllers/template_instantiation.go.
func Lint(values string) []Finding {
	l := &linter{text: values}
	l.lines()
	l.template()
	slices.SortStableFunc(l.findings, func(a, b Finding) int { return a.Line - b.Line })
	return l.findings
}

// linter accumulates findings over one text.
type linter struct {
	text     string
	findings []Finding
}

// add records a finding.
func (l *linter) add(line int, rule Rule, format string, args ...any) {
	l.findings = append(l.findings, Finding{Line: line, Rule: rule, Message: fmt.Sprintf(format, args...)})
}

// lines checks the characters that turn the pass-1 scalar into a double-quoted one.
func (l *linter) lines() {
	for i, line := range strings.Split(l.text, "\n") {
		n := i + 1
		if strings.Contains(line, "\r") {
			l.add(n, RuleCarriageReturn, "carriage return: pass 1 double-quotes the whole values text; use LF line ends")
		}
		trimmed := strings.TrimRight(line, "\r")
		if trimmed != strings.TrimRight(trimmed, " \t") {
			l.add(n, RuleTrailingSpace, "trailing whitespace: pass 1 double-quotes the whole values text; remove it")
		}
		if strings.HasPrefix(line, "\t") {
			l.add(n, RuleTabIndent, "tab at line start: pass 1 double-quotes the whole values text; indent with spaces")
		}
	}
}

// template parses the text and walks its actions.
func (l *linter) template() {
	funcs := map[string]any{}
	for _, fm := range []map[string]any{baseFuncs(Environment{}, nil), resourceFuncs(nil)} {
		for k, v := range fm {
			funcs[k] = v
		}
	}
	for _, name := range append(helmOnly(), builtins()...) {
		funcs[name] = true
	}
	trees, err := parse.Parse("values", l.text, "", "", funcs)
	if err != nil {
		line := errorLine(err, startedAt)
		if line == 0 {
			line = max(1, errorLine(err, templateLine))
		}
		l.add(line, RuleParse, "%v", err)
		return
	}
	raw, err := yaml.Marshal(l.text)
	if err != nil || len(raw) == 0 {
		l.add(1, RuleQuotedScalar, "pass 1 cannot write the text as YAML (%v); keep values to printable text", err)
		return
	}
	w := &walker{l: l, style: raw[0], assigned: map[string]int{}, checked: map[string]bool{}}
	if w.style == '"' && len(l.findings) == 0 && strings.Contains(l.text, "\n") {
		l.add(1, RuleQuotedScalar, "the text holds characters (control or special characters) that make pass 1 double-quote it; keep values to printable text")
	}
	names := make([]string, 0, len(trees))
	for name := range trees {
		names = append(names, name)
	}
	slices.Sort(names)
	for _, name := range names {
		w.node(trees[name].Root)
	}
	w.finish()
}

// walker visits the parse tree of a values text.
type walker struct {
	l          *linter
	style      byte           // first byte of the pass-1 YAML: '|' literal block, '"' double-quoted, else single-line
	assigned   map[string]int // variables holding a fromYaml result, with the line of the assignment
	checked    map[string]bool
	singleLine bool // the single-line finding was reported
}

// line returns the 1-based line of a byte offset.
func (w *walker) line(pos parse.Pos) int { return strings.Count(w.l.text[:pos], "\n") + 1 }

// node visits a template node.
func (w *walker) node(n parse.Node) {
	switch n := n.(type) {
	case *parse.ListNode:
		if n == nil {
			return
		}
		for _, c := range n.Nodes {
			w.node(c)
		}
	case *parse.ActionNode:
		w.action(n)
		w.pipe(n.Pipe)
	case *parse.IfNode:
		w.branch(&n.BranchNode)
	case *parse.RangeNode:
		w.branch(&n.BranchNode)
	case *parse.WithNode:
		w.branch(&n.BranchNode)
	case *parse.TemplateNode:
		w.pipe(n.Pipe)
	}
}

// branch visits if/range/with.
func (w *walker) branch(b *parse.BranchNode) {
	w.pipe(b.Pipe)
	w.node(b.List)
	if b.ElseList != nil {
		w.node(b.ElseList)
	}
}

// pipe visits a pipeline and records fromYaml assignments.
func (w *walker) pipe(p *parse.PipeNode) {
	if p == nil {
		return
	}
	declared := len(p.Decl) == 1 && len(p.Cmds) == 1 && slices.Contains(fromFuncs(), firstIdent(p.Cmds[0]))
	if declared {
		w.assigned[p.Decl[0].Ident[0]] = w.line(p.Position())
	}
	for _, c := range p.Cmds {
		w.cmd(c, declared)
	}
}

// cmd visits one command of a pipeline.
func (w *walker) cmd(c *parse.CommandNode, declared bool) {
	name := firstIdent(c)
	switch {
	case slices.Contains(helmOnly(), name):
		w.l.add(w.line(c.Position()), RuleHelmOnly, "%q is a Helm function; Sveltos does not define it (use dig, fail, getResource)", name)
	case slices.Contains(fromFuncs(), name) && !declared:
		w.l.add(w.line(c.Position()), RuleUncheckedFromYaml,
			"%s result used directly: bad input yields a map with key Error; assign it ($v := %s ...) and test hasKey $v \"Error\"", name, name)
	case slices.Contains([]string{"hasKey", "index", "get", "dig"}, name):
		w.markErrorCheck(c.Args)
		if name == "hasKey" && len(c.Args) > 1 && isMgmtResources(c.Args[1]) {
			w.l.add(w.line(c.Position()), RuleMgmtHasKey,
				`hasKey .MgmtResources fails: it is not a map[string]any; use {{ with index .MgmtResources "ID" }} or getResource "ID"`)
		}
	}
	for _, a := range c.Args {
		w.arg(a)
	}
}

// markErrorCheck marks $v checked when args hold both $v and the string "Error".
func (w *walker) markErrorCheck(args []parse.Node) {
	hasError := slices.ContainsFunc(args, func(a parse.Node) bool {
		s, ok := a.(*parse.StringNode)
		return ok && s.Text == "Error"
	})
	if !hasError {
		return
	}
	for _, a := range args {
		if v, ok := a.(*parse.VariableNode); ok && len(v.Ident) == 1 {
			w.checked[v.Ident[0]] = true
		}
	}
}

// arg visits an argument: data fields, $v.Error reads and nested pipelines.
func (w *walker) arg(a parse.Node) {
	switch a := a.(type) {
	case *parse.FieldNode:
		w.field(a.Ident, a.Position())
		if len(a.Ident) == 1 && a.Ident[0] == "Error" {
			w.l.add(w.line(a.Position()), RuleErrorField,
				".Error fails with missingkey=error when parsing succeeded; test hasKey on the parsed map first")
		}
	case *parse.VariableNode:
		if len(a.Ident) >= 2 && a.Ident[1] == "Error" {
			w.l.add(w.line(a.Position()), RuleErrorField,
				"%s.Error fails with missingkey=error when parsing succeeded; test hasKey %s \"Error\" first", a.Ident[0], a.Ident[0])
		}
		if len(a.Ident) >= 2 && a.Ident[0] == "$" {
			w.field(a.Ident[1:], a.Position())
		}
	case *parse.ChainNode:
		w.arg(a.Node)
	case *parse.PipeNode:
		w.pipe(a)
	case *parse.StringNode:
		if strings.Contains(a.Quoted, "\n") {
			w.l.add(w.line(a.Position()), RuleMultilineString,
				"a string literal spans several lines: in double-pass mode pass 1 adds 2 spaces to each continuation line, so the value differs between the passes; write it on one line, with \\n escapes")
		}
	}
}

// field reports a top-level data field Sveltos does not have.
func (w *walker) field(ident []string, pos parse.Pos) {
	if len(ident) > 0 && slices.Contains(helmData(), ident[0]) {
		w.l.add(w.line(pos), RuleDataField,
			".%s does not exist in Sveltos; the data has .Cluster, .InfrastructureProvider, .KubeadmControlPlane, .MgmtResources", ident[0])
	}
}

// action checks an output action against the pass-1 scalar style.
func (w *walker) action(a *parse.ActionNode) {
	if a.Pipe == nil || len(a.Pipe.Decl) > 0 {
		return
	}
	n := w.line(a.Position())
	if delimString(a.Pipe) {
		w.l.add(n, RuleEscapedDelims, "an action that outputs {{ or }} is executed again by pass 2 in double-pass mode; escape twice or avoid template delimiters in values")
	}
	if w.style == '"' && quotedString(a.Pipe) {
		w.l.add(n, RuleQuoteInAction, `a "..." string inside an action breaks once pass 1 double-quotes the values text; use a `+"`...`"+` raw string or fix the whitespace findings`)
	}
	if w.style != '|' && w.style != '"' {
		if !w.singleLine {
			w.singleLine = true
			w.l.add(n, RuleSingleLine, "single-line values text with an action: pass 1 makes it a quoted or plain YAML scalar, and output containing ' or \": \" breaks it; write the values on several lines")
		}
		return
	}
	last := a.Pipe.Cmds[len(a.Pipe.Cmds)-1]
	if newlineString(a.Pipe) {
		w.l.add(n, RuleMultilineOutput, "a string with a line break inside an action: in double-pass mode pass 1 moves the following line 2 columns left or drops it; keep action output on one line")
	} else if name := firstIdent(last); slices.Contains(multiline(), name) {
		where := "at line start"
		if w.nested(a.Position()) {
			where = "nested under literal text"
		}
		w.l.add(n, RuleMultilineOutput,
			"multi-line output of %s %s: in double-pass mode pass 1 moves its continuation lines 2 columns left or drops them; emit one line of flow YAML with toJson",
			name, where)
	}
}

// nested reports whether the action starting at pos (after "{{") follows literal text on its line.
func (w *walker) nested(pos parse.Pos) bool {
	start := strings.LastIndex(w.l.text[:pos], "{{")
	if start < 0 {
		return false
	}
	lineStart := strings.LastIndex(w.l.text[:start], "\n") + 1
	return strings.TrimSpace(w.l.text[lineStart:start]) != ""
}

// finish reports fromYaml results never checked for Error.
func (w *walker) finish() {
	vars := make([]string, 0, len(w.assigned))
	for v := range w.assigned {
		vars = append(vars, v)
	}
	slices.Sort(vars)
	for _, v := range vars {
		if !w.checked[v] {
			w.l.add(w.assigned[v], RuleUncheckedFromYaml,
				"%s holds a fromYaml result that is never checked: bad input yields a map with key Error; test hasKey %s \"Error\" and fail", v, v)
		}
	}
}

// isMgmtResources reports whether n is the field .MgmtResources (or $.MgmtResources).
func isMgmtResources(n parse.Node) bool {
	switch n := n.(type) {
	case *parse.FieldNode:
		return len(n.Ident) == 1 && n.Ident[0] == "MgmtResources"
	case *parse.VariableNode:
		return len(n.Ident) == 2 && n.Ident[0] == "$" && n.Ident[1] == "MgmtResources"
	}
	return false
}

// firstIdent returns the function name a command calls, "" when it calls none.
func firstIdent(c *parse.CommandNode) string {
	if len(c.Args) == 0 {
		return ""
	}
	if id, ok := c.Args[0].(*parse.IdentifierNode); ok {
		return id.Ident
	}
	return ""
}

// delimString reports whether a pipeline holds a string literal containing a template delimiter.
func delimString(p *parse.PipeNode) bool {
	for _, c := range p.Cmds {
		for _, a := range c.Args {
			if s, ok := a.(*parse.StringNode); ok && (strings.Contains(s.Text, "{{") || strings.Contains(s.Text, "}}")) {
				return true
			}
		}
	}
	return false
}

// newlineString reports whether a pipeline holds a one-line string literal whose value has a line break (an
// escape); literals written over several lines are RuleMultilineString's.
func newlineString(p *parse.PipeNode) bool {
	for _, c := range p.Cmds {
		for _, a := range c.Args {
			if s, ok := a.(*parse.StringNode); ok && strings.ContainsAny(s.Text, "\n\r") && !strings.Contains(s.Quoted, "\n") {
				return true
			}
		}
	}
	return false
}

// quotedString reports whether a pipeline holds an interpreted ("...") string literal.
func quotedString(p *parse.PipeNode) bool {
	for _, c := range p.Cmds {
		for _, a := range c.Args {
			switch a := a.(type) {
			case *parse.StringNode:
				if strings.HasPrefix(a.Quoted, `"`) {
					return true
				}
			case *parse.PipeNode:
				if quotedString(a) {
					return true
				}
			}
		}
	}
	return false
}
