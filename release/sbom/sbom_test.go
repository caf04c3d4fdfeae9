package sbom

import (
	"bytes"
	"context"
	"os"
	"os/exec"
	"path/filepath"
	"strings"
	"testing"
	"time"

	cdx "github.com/CycloneDX/cyclonedx-go"
	"github.com/xeipuuv/gojsonschema"

	"kof.dev/kof/release/image"
)

const moduleRoot = "../.."

// built returns the hello test image (release/image/testdata/hello) for two platforms.
func built(t *testing.T) (*image.Image, Subject, []Binary) {
	t.Helper()
	created := time.Date(2026, 3, 1, 12, 0, 0, 0, time.UTC)
	img, err := image.Build(context.Background(), moduleRoot, t.TempDir(), image.Spec{Name: "hello",
		Package: "./release/image/testdata/hello", Version: "1.2.3", Revision: "abc", Source: "https://example.com/kof",
		Created: created})
	if err != nil {
		t.Fatal(err)
	}
	s := Subject{Repository: "127.0.0.1:5000/kof/hello", Name: "hello", Version: "1.2.3", Digest: img.Digest.String(),
		Revision: "abc", Source: "https://example.com/kof", Created: created}
	var bins []Binary
	for _, b := range img.Binaries {
		bins = append(bins, Binary{Platform: b.Platform.String(), ImageDigest: b.ImageDigest.String(), SHA256: b.SHA256,
			Info: b.Info})
	}
	return img, s, bins
}

// The document of a real binary validates against the CycloneDX 1.6 JSON schema shipped with cyclonedx-go,
// decodes with the library's decoder, names every module of the binary and is byte-for-byte stable.
func TestDocumentValidatesAndNamesTheModules(t *testing.T) {
	_, s, bins := built(t)
	bom, err := New(s, bins)
	if err != nil {
		t.Fatal(err)
	}
	data, err := Encode(bom)
	if err != nil {
		t.Fatal(err)
	}
	for _, e := range validate(t, data) {
		t.Errorf("CycloneDX 1.6 schema: %s", e)
	}
	broken := bytes.Replace(data, []byte(`"type": "library"`), []byte(`"type": "librarie"`), 1)
	if len(validate(t, broken)) == 0 {
		t.Error("a component of an unknown type passed the schema: the check cannot fail")
	}
	again, err := New(s, bins)
	if err != nil {
		t.Fatal(err)
	}
	data2, err := Encode(again)
	if err != nil {
		t.Fatal(err)
	}
	if !bytes.Equal(data, data2) {
		t.Error("two documents of one image differ")
	}
	dec, err := Decode(data)
	if err != nil {
		t.Fatal(err)
	}
	if dec.SpecVersion != cdx.SpecVersion1_6 || dec.Metadata.Component.Type != cdx.ComponentTypeContainer ||
		dec.Metadata.Component.BOMRef != "127.0.0.1:5000/kof/hello@"+s.Digest || dec.Metadata.Timestamp != "2026-03-01T12:00:00Z" {
		t.Errorf("decoded metadata %+v (spec %s)", dec.Metadata.Component, dec.SpecVersion)
	}
	if !strings.HasPrefix(dec.SerialNumber, "urn:uuid:") {
		t.Errorf("serial number %q", dec.SerialNumber)
	}
	purls := map[string]bool{}
	apps := 0
	for _, c := range *dec.Components {
		purls[c.PackageURL] = true
		if c.Type == cdx.ComponentTypeApplication {
			apps++
		}
	}
	if apps != 2 {
		t.Errorf("%d application components, want one per platform (2)", apps)
	}
	for _, b := range bins {
		for _, d := range b.Info.Deps {
			if p := golangPURL(d.Path, d.Version); !purls[p] {
				t.Errorf("module %s %s of the %s binary is not listed (%s)", d.Path, d.Version, b.Platform, p)
			}
		}
		if !purls[golangPURL("std", b.Info.GoVersion)] {
			t.Errorf("the standard library %s is not listed", b.Info.GoVersion)
		}
	}
	if !purls["pkg:golang/golang.org/x/crypto/x509roots/fallback@"+depVersion(bins[0], image.CARootsPackage)] {
		t.Error("the CA roots module is not listed")
	}
	if len(*dec.Dependencies) != 3 || (*dec.Dependencies)[0].Ref != dec.Metadata.Component.BOMRef {
		t.Errorf("dependencies %+v, want the image then each binary", *dec.Dependencies)
	}
}

func TestPURLEncoding(t *testing.T) {
	for in, want := range map[[2]string]string{
		{"github.com/docker/cli", "v29.7.2+incompatible"}: "pkg:golang/github.com/docker/cli@v29.7.2%2Bincompatible",
		{"std", "go1.26.8"}: "pkg:golang/std@go1.26.8",
	} {
		if got := golangPURL(in[0], in[1]); got != want {
			t.Errorf("golangPURL(%q, %q) = %q, want %q", in[0], in[1], got, want)
		}
	}
	got := ociPURL(Subject{Name: "kof-operator", Digest: "sha256:ab", Repository: "r.example.com/kof/kof-operator", Version: "2.0.0"})
	if want := "pkg:oci/kof-operator@sha256:ab?repository_url=r.example.com%2Fkof%2Fkof-operator&tag=2.0.0"; got != want {
		t.Errorf("ociPURL = %q, want %q", got, want)
	}
}

func TestNewRefusesNoBinary(t *testing.T) {
	if _, err := New(Subject{Name: "x"}, nil); err == nil {
		t.Error("New without binaries succeeded")
	}
	if _, err := New(Subject{Name: "x"}, []Binary{{Platform: "linux/amd64"}}); err == nil {
		t.Error("New with a binary without build information succeeded")
	}
}

func depVersion(b Binary, path string) string {
	for _, d := range b.Info.Deps {
		if d.Path == path {
			return d.Version
		}
	}
	return ""
}

// validate checks data against bom-1.6.schema.json of the cyclonedx-go module in use, with the SPDX license and
// JSF schemas it references loaded from the same folder (nothing is fetched); it returns the violations.
func validate(t *testing.T, data []byte) []string {
	t.Helper()
	mod, err := exec.Command("go", "list", "-m", "-f", "{{.Dir}}", "github.com/CycloneDX/cyclonedx-go").Output()
	if err != nil {
		t.Fatalf("locate cyclonedx-go: %v", err)
	}
	dir := filepath.Join(strings.TrimSpace(string(mod)), "schema")
	read := func(name string) gojsonschema.JSONLoader {
		b, err := os.ReadFile(filepath.Join(dir, name))
		if err != nil {
			t.Fatal(err)
		}
		return gojsonschema.NewBytesLoader(b)
	}
	sl := gojsonschema.NewSchemaLoader()
	if err := sl.AddSchema("http://cyclonedx.org/schema/spdx.schema.json", read("spdx.schema.json")); err != nil {
		t.Fatal(err)
	}
	if err := sl.AddSchema("http://cyclonedx.org/schema/jsf-0.82.schema.json", read("jsf-0.82.schemax.json")); err != nil {
		t.Fatal(err)
	}
	schema, err := sl.Compile(read("bom-1.6.schema.json"))
	if err != nil {
		t.Fatalf("compile CycloneDX 1.6 schema: %v", err)
	}
	res, err := schema.Validate(gojsonschema.NewBytesLoader(data))
	if err != nil {
		t.Fatal(err)
	}
	var out []string
	for _, e := range res.Errors() {
		out = append(out, e.String())
	}
	return out
}
