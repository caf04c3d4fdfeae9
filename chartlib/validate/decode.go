package validate

import (
	"encoding/json"
	"fmt"
	"reflect"
	"regexp"
	"sort"
	"strings"

	"k8s.io/apimachinery/pkg/apis/meta/v1/unstructured"
	"k8s.io/apimachinery/pkg/runtime"
	sigsjson "sigs.k8s.io/json"

	"kof.dev/kof/chartlib/values"
)

// fieldInError finds the field path in sigs.k8s.io/json strict errors: `unknown field "spec.x"`,
// `duplicate field "spec.x"`.
var fieldInError = regexp.MustCompile(`field "([^"]*)"`)

// decodeStrict decodes obj into typed (a fresh object of obj's kind) and returns every unknown field, duplicate
// field and type error, with its field path (an unknown field with a did-you-mean from the type's JSON fields when
// one is close). For types with their own UnmarshalJSON (which may hide spec problems)
// the spec is decoded again strictly into the spec field's type, and Status.ParsingSpecError is reported.
func decodeStrict(obj *unstructured.Unstructured, typed runtime.Object) []problem {
	out := decodeProblems(obj, typed)
	suggestFields(out, reflect.TypeOf(typed))
	return out
}

// decodeProblems is decodeStrict without the did-you-mean of unknown fields.
func decodeProblems(obj *unstructured.Unstructured, typed runtime.Object) []problem {
	data, err := obj.MarshalJSON()
	if err != nil {
		return []problem{{msg: fmt.Sprintf("encode object: %v", err)}}
	}
	out := strictInto(data, typed, "")
	if _, custom := typed.(json.Unmarshaler); !custom {
		return out
	}
	spec, hasSpec := obj.Object["spec"]
	field := reflect.ValueOf(typed).Elem().FieldByName("Spec")
	if hasSpec && field.IsValid() {
		specData, err := json.Marshal(spec)
		if err != nil {
			return append(out, problem{path: "spec", msg: fmt.Sprintf("encode spec: %v", err)})
		}
		specProblems := strictInto(specData, reflect.New(field.Type()).Interface(), "spec")
		out = append(out, specProblems...)
		if len(specProblems) > 0 {
			return out
		}
	}
	if msg := parsingSpecError(typed); msg != "" {
		out = append(out, problem{path: "spec", msg: "operator API types reject the spec: " + msg})
	}
	return out
}

// strictInto decodes data into v with sigs.k8s.io/json strict options and returns its problems; prefix ("" or
// "spec") is prepended to field paths.
func strictInto(data []byte, v any, prefix string) []problem {
	strictErrs, err := sigsjson.UnmarshalStrict(data, v)
	var out []problem
	for _, e := range strictErrs {
		out = append(out, problemOf(e.Error(), prefix))
	}
	if err != nil {
		out = append(out, problemOf(err.Error(), prefix))
	}
	return out
}

// problemOf turns a decoding error text into a problem whose path is the quoted field (if any) under prefix.
func problemOf(msg, prefix string) problem {
	path := ""
	if m := fieldInError.FindStringSubmatch(msg); m != nil {
		path = m[1]
	} else if i := strings.Index(msg, "Go struct field "); i >= 0 {
		// json type errors: `... into Go struct field VMClusterSpec.spec.retentionPeriod of type string`
		rest := msg[i+len("Go struct field "):]
		if j := strings.Index(rest, " "); j >= 0 {
			rest = rest[:j]
		}
		if k := strings.Index(rest, "."); k >= 0 {
			path = rest[k+1:]
		}
	}
	if prefix != "" && path != "" && !strings.HasPrefix(path, prefix+".") {
		path = prefix + "." + path
	} else if prefix != "" && path == "" {
		path = prefix
	}
	return problem{path: path, msg: msg}
}

// parsingSpecError returns typed.Status.ParsingSpecError when typed has such a string field (VictoriaMetrics
// operator types), else "".
func parsingSpecError(typed runtime.Object) string {
	status := reflect.ValueOf(typed).Elem().FieldByName("Status")
	if !status.IsValid() || status.Kind() != reflect.Struct {
		return ""
	}
	f := status.FieldByName("ParsingSpecError")
	if !f.IsValid() || f.Kind() != reflect.String {
		return ""
	}
	return f.String()
}

// suggestFields adds `; did you mean <field>?` to every unknown-field problem of ps whose field is a plausible typo
// of a JSON field the Go type t has at that path (values.Suggest; spec.replicationFactr: replicationFactor).
func suggestFields(ps []problem, t reflect.Type) {
	for i, p := range ps {
		if !strings.HasPrefix(p.msg, "unknown field") || p.path == "" {
			continue
		}
		segs := strings.Split(p.path, ".")
		if s := values.Suggest(segs[len(segs)-1], jsonFields(t, segs[:len(segs)-1])); s != "" {
			ps[i].msg += "; did you mean " + s + "?"
		}
	}
}

// jsonFields returns the JSON field names of the struct that Go type t holds at the dotted JSON path segs (through
// pointers, slices and maps, whose index or key segments are skipped, and inlined or embedded structs); nil when the
// path leaves the type's structs.
func jsonFields(t reflect.Type, segs []string) []string {
	for t.Kind() == reflect.Pointer || t.Kind() == reflect.Slice || t.Kind() == reflect.Map {
		if t.Kind() != reflect.Pointer && len(segs) > 0 {
			segs = segs[1:] // an index or a map key
		}
		t = t.Elem()
	}
	if t.Kind() != reflect.Struct {
		return nil
	}
	fields := map[string]reflect.Type{}
	var collect func(t reflect.Type)
	collect = func(t reflect.Type) {
		for i := range t.NumField() {
			f := t.Field(i)
			name, opts, _ := strings.Cut(f.Tag.Get("json"), ",")
			if name == "-" {
				continue
			}
			ft := f.Type
			for ft.Kind() == reflect.Pointer {
				ft = ft.Elem()
			}
			if (f.Anonymous && name == "") || strings.Contains(opts, "inline") {
				if ft.Kind() == reflect.Struct {
					collect(ft)
				}
				continue
			}
			if name == "" {
				name = f.Name
			}
			if f.IsExported() {
				fields[name] = f.Type
			}
		}
	}
	collect(t)
	if len(segs) == 0 {
		names := make([]string, 0, len(fields))
		for n := range fields {
			names = append(names, n)
		}
		sort.Strings(names)
		return names
	}
	next, ok := fields[segs[0]]
	if !ok {
		return nil
	}
	return jsonFields(next, segs[1:])
}
