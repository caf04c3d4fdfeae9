package main

import (
	"strings"
	"testing"
)

func TestParse(t *testing.T) {
	o, err := parse([]string{"--authz-resource", "fleet", "--token-audiences", "a,b"})
	if err != nil {
		t.Fatal(err)
	}
	if o.addr != ":8443" || o.charts != "" || o.attrs.Group != "kof.k0rdent.mirantis.com" || o.attrs.Resource != "fleet" ||
		o.attrs.Verb != "get" || o.audiences != "a,b" {
		t.Errorf("options %+v", o)
	}
	bad := map[string][]string{
		"--tls-key-file": {"--tls-cert-file", "cert.pem"},
		"--authz-verb":   {"--authz-verb", ""},
		"unexpected":     {"extra"},
		"flag provided":  {"--no-such-flag"},
	}
	for want, args := range bad {
		if _, err := parse(args); err == nil || !strings.Contains(err.Error(), want) {
			t.Errorf("parse(%q): %v, want an error naming %q", args, err, want)
		}
	}
}
