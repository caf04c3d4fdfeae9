package vmapi

import (
	"bytes"
	"encoding/json"
	"testing"

	vmv1 "github.com/VictoriaMetrics/operator/api/operator/v1"
	vmv1beta1 "github.com/VictoriaMetrics/operator/api/operator/v1beta1"
	"github.com/google/go-cmp/cmp"
	corev1 "k8s.io/api/core/v1"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/apimachinery/pkg/runtime"
	"k8s.io/utils/ptr"
)

// Every type of this package, with every field set, decodes into its upstream type and encodes back from it to the
// same JSON: field names and tags agree with upstream (a field upstream does not know is lost in the round trip; the
// strict decoder alone would not see it, the upstream VMUser decodes its spec itself).
func TestTypesDecodeStrictlyIntoUpstream(t *testing.T) {
	meta := metav1.ObjectMeta{Name: "n", Namespace: "ns", Labels: map[string]string{"a": "b"},
		Annotations: map[string]string{"c": "d"}}
	sel := &SelectComponent{ExtraArgs: map[string]string{"storageNode": "vmauth.example.com/vls"},
		Secrets: []string{"kof-storage-creds"}}
	for _, tt := range []struct {
		ours     runtime.Object
		upstream any
	}{
		{&VMUser{TypeMeta: metav1.TypeMeta{APIVersion: V1beta1.String(), Kind: "VMUser"}, ObjectMeta: meta,
			Spec: VMUserSpec{Username: ptr.To("u"),
				PasswordRef: &corev1.SecretKeySelector{LocalObjectReference: corev1.LocalObjectReference{Name: "s"}, Key: "password"},
				TargetRefs: []TargetRef{{Static: &StaticRef{URL: "http://vmselect:8481"}, Paths: []string{"/vm/select/.*"},
					URLMapCommon: URLMapCommon{DropSrcPathPrefixParts: ptr.To(1)},
					QueryArgs:    []QueryArg{{Name: "extra_label", Values: []string{"tenant=t"}}}}}}},
			&vmv1beta1.VMUser{}},
		{&VLCluster{TypeMeta: metav1.TypeMeta{APIVersion: V1.String(), Kind: "VLCluster"}, ObjectMeta: meta,
			Spec: VLClusterSpec{VLSelect: sel}}, &vmv1.VLCluster{}},
		{&VTCluster{TypeMeta: metav1.TypeMeta{APIVersion: V1.String(), Kind: "VTCluster"}, ObjectMeta: meta,
			Spec: VTClusterSpec{Select: sel}}, &vmv1.VTCluster{}},
	} {
		b, err := json.Marshal(tt.ours)
		if err != nil {
			t.Fatal(err)
		}
		dec := json.NewDecoder(bytes.NewReader(b))
		dec.DisallowUnknownFields()
		if err := dec.Decode(tt.upstream); err != nil {
			t.Errorf("%T does not decode strictly into %T: %v\n%s", tt.ours, tt.upstream, err, b)
			continue
		}
		back, err := json.Marshal(tt.upstream)
		if err != nil {
			t.Fatal(err)
		}
		var want, got map[string]any
		_ = json.Unmarshal(b, &want)
		_ = json.Unmarshal(back, &got)
		delete(got, "status") // upstream status is not ours
		if spec, ok := got["spec"].(map[string]any); ok {
			pruneEmpty(spec)
		}
		if diff := cmp.Diff(want, got); diff != "" {
			t.Errorf("%T through %T (-ours +upstream):\n%s", tt.ours, tt.upstream, diff)
		}
	}
}

// pruneEmpty drops the empty objects upstream types encode for struct fields without omitempty.
func pruneEmpty(m map[string]any) {
	for k, v := range m {
		if sub, ok := v.(map[string]any); ok {
			pruneEmpty(sub)
			if len(sub) == 0 {
				delete(m, k)
			}
		}
	}
}

// AddToScheme registers every kind under its upstream group version.
func TestAddToScheme(t *testing.T) {
	s := runtime.NewScheme()
	if err := AddToScheme(s); err != nil {
		t.Fatal(err)
	}
	for kind, gv := range map[string]string{"VMUser": V1beta1.String(), "VMUserList": V1beta1.String(),
		"VLCluster": V1.String(), "VTCluster": V1.String(), "VLClusterList": V1.String(), "VTClusterList": V1.String()} {
		found := false
		for gvk := range s.AllKnownTypes() {
			if gvk.Kind == kind && gvk.GroupVersion().String() == gv {
				found = true
			}
		}
		if !found {
			t.Errorf("%s/%s not registered", gv, kind)
		}
	}
}
