package clusterdeployment

import (
	"context"
	"net/http"
	"strings"
	"sync"
	"testing"

	corev1 "k8s.io/api/core/v1"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/client-go/rest"
	"sigs.k8s.io/controller-runtime/pkg/client"

	kofv1 "kof.dev/kof/operator/api/v1beta1"
	"kof.dev/kof/operator/internal/apply"
)

// acceptAudit records the Accept header of every PATCH its client sends.
type acceptAudit struct {
	next    http.RoundTripper
	mu      *sync.Mutex
	accepts *[]string
}

func (a acceptAudit) RoundTrip(req *http.Request) (*http.Response, error) {
	if req.Method == http.MethodPatch {
		a.mu.Lock()
		*a.accepts = append(*a.accepts, req.Header.Get("Accept"))
		a.mu.Unlock()
	}
	return a.next.RoundTrip(req)
}

// staleReader answers every Get with a copy of obj, as a cache that has not seen the latest write does.
type staleReader struct {
	client.Reader
	obj *corev1.ConfigMap
}

func (s staleReader) Get(_ context.Context, _ client.ObjectKey, out client.Object, _ ...client.GetOption) error {
	s.obj.DeepCopyInto(out.(*corev1.ConfigMap))
	return nil
}

// An Applier with a MetadataWriter applies the desired object under the operator's field manager, asks the API
// server for the answer's metadata alone, and records the answered resource version: an Apply that then reads the
// object as it was before (a lagging cache) writes nothing, and a changed desired object is applied.
func TestMetadataWriterApplies(t *testing.T) {
	ctx := context.Background()
	var mu sync.Mutex
	var accepts []string
	rc := rest.CopyConfig(env.Config)
	rc.WrapTransport = func(rt http.RoundTripper) http.RoundTripper {
		return acceptAudit{next: rt, mu: &mu, accepts: &accepts}
	}
	mw := apply.NewMetadataWriter(rc, env.Client.RESTMapper())

	before := &corev1.ConfigMap{ObjectMeta: metav1.ObjectMeta{Namespace: "kof", Name: "metadata-writer"},
		Data: map[string]string{"chart": "x"}}
	if err := env.Client.Create(ctx, before); err != nil {
		t.Fatal(err)
	}
	desired := func(v string) *corev1.ConfigMap {
		return &corev1.ConfigMap{ObjectMeta: metav1.ObjectMeta{Namespace: "kof", Name: "metadata-writer",
			Labels: map[string]string{kofv1.ManagedByLabel: kofv1.ManagedBy}}, Data: map[string]string{"a": v}}
	}
	var written apply.Written
	a := apply.Applier{Reader: env.Client, Writer: env.Client, Written: &written, Metadata: mw}
	if wrote, err := a.Apply(ctx, desired("1")); err != nil || !wrote {
		t.Fatalf("first apply: wrote %v, err %v", wrote, err)
	}
	var live corev1.ConfigMap
	if err := env.Client.Get(ctx, client.ObjectKeyFromObject(before), &live); err != nil {
		t.Fatal(err)
	}
	if live.Data["a"] != "1" || live.Data["chart"] != "x" || live.Labels[kofv1.ManagedByLabel] != kofv1.ManagedBy {
		t.Fatalf("object after the apply: labels %v, data %v", live.Labels, live.Data)
	}
	owned := false
	for _, e := range live.ManagedFields {
		owned = owned || (e.Manager == apply.FieldManager && e.Operation == metav1.ManagedFieldsOperationApply)
	}
	if !owned {
		t.Errorf("managedFields %v lack the operator's apply entry", live.ManagedFields)
	}
	mu.Lock()
	if len(accepts) != 1 || !strings.Contains(accepts[0], "as=PartialObjectMetadata") {
		t.Errorf("Accept headers of the applies: %q; want one asking for PartialObjectMetadata", accepts)
	}
	mu.Unlock()

	lagging := apply.Applier{Reader: staleReader{Reader: env.Client, obj: before}, Writer: env.Client, Written: &written, Metadata: mw}
	if wrote, err := lagging.Apply(ctx, desired("1")); err != nil || wrote {
		t.Errorf("same object read before the apply: wrote %v, err %v; want no write (the answered version recorded)", wrote, err)
	}
	if wrote, err := a.Apply(ctx, desired("2")); err != nil || !wrote {
		t.Errorf("changed object: wrote %v, err %v; want a write", wrote, err)
	}
	if err := env.Client.Get(ctx, client.ObjectKeyFromObject(before), &live); err != nil || live.Data["a"] != "2" {
		t.Errorf("object after the second apply: %v, %v", live.Data, err)
	}
}
