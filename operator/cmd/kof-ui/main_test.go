package main

import (
	"strings"
	"testing"
)

func TestParse(t *testing.T) {
	o, err := parse([]string{"--charts", "/charts", "--authz-resource", "fleet", "--token-audiences", "a,b"})
	if err != nil {
		t.Fatal(err)
	}
	if o.addr != ":8443" || o.attrs.Group != "kof.k0rdent.mirantis.com" || o.attrs.Resource != "fleet" ||
		o.attrs.Verb != "get" || o.audiences != "a,b" {
		t.Errorf("options %+v", o)
	}
	bad := map[string][]string{
		"--charts":       nil,
		"--tls-key-file": {"--charts", "c", "--tls-cert-file", "cert.pem"},
		"--authz-verb":   {"--charts", "c", "--authz-verb", ""},
		"unexpected":     {"--charts", "c", "extra"},
		"flag provided":  {"--charts", "c", "--no-such-flag"},
	}
	for want, args := range bad {
		if _, err := parse(args); err == nil || !strings.Contains(err.Error(), want) {
			t.Errorf("parse(%q): %v, want an error naming %q", args, err, want)
		}
	}
}
