package harness

import (
	"context"
	"fmt"

	corev1 "k8s.io/api/core/v1"
	apierrors "k8s.io/apimachinery/pkg/api/errors"
	"k8s.io/apimachinery/pkg/apis/meta/v1/unstructured"
	"k8s.io/client-go/util/retry"
	"sigs.k8s.io/controller-runtime/pkg/client"
)

// FieldManager is the server-side apply field manager of every object this package writes itself (namespaces,
// scenario objects, HelmRelease status).
const FieldManager = "kof-install"

// strictValidation makes the API server reject unknown or duplicate fields instead of pruning them with a warning
// (docs/design.md, "Testing against a real API server": it must be a typed option, CreateOptions.Raw is overwritten).
const strictValidation = "Strict"

// ensureNamespace creates namespace name (with labels) or adds the labels to the existing one. It returns the API
// error naming the namespace.
func ensureNamespace(ctx context.Context, c client.Client, name string, labels map[string]string) error {
	ns := &corev1.Namespace{}
	err := c.Get(ctx, client.ObjectKey{Name: name}, ns)
	switch {
	case apierrors.IsNotFound(err):
		ns.Name, ns.Labels = name, labels
		if err := c.Create(ctx, ns, client.FieldValidation(strictValidation)); err != nil {
			return fmt.Errorf("create namespace %q: %w", name, err)
		}
		return nil
	case err != nil:
		return fmt.Errorf("get namespace %q: %w", name, err)
	}
	if len(labels) == 0 {
		return nil
	}
	patch := client.MergeFrom(ns.DeepCopy())
	if ns.Labels == nil {
		ns.Labels = map[string]string{}
	}
	for k, v := range labels {
		ns.Labels[k] = v
	}
	if err := c.Patch(ctx, ns, patch); err != nil {
		return fmt.Errorf("label namespace %q: %w", name, err)
	}
	return nil
}

// CreateStrict creates obj with strict field validation; when obj carries a status and the kind has a status
// subresource (the API server drops status on create), the status is written afterwards. An object that exists
// already is updated in place (spec and metadata from obj), read again and updated again when another writer changed
// it in between. The error names the object.
func CreateStrict(ctx context.Context, c client.Client, obj *unstructured.Unstructured) error {
	status, hasStatus, _ := unstructured.NestedFieldCopy(obj.Object, "status")
	desired := obj.DeepCopy()
	err := c.Create(ctx, desired, client.FieldValidation(strictValidation))
	if apierrors.IsAlreadyExists(err) {
		// A controller may write the object between the read and the update (KCM writes the MultiClusterServices
		// a fidelity scenario creates twice, as the operator's outputs and as services of the management cluster): on
		// a conflict it is read and updated again.
		err = retry.RetryOnConflict(retry.DefaultRetry, func() error {
			current := &unstructured.Unstructured{}
			current.SetGroupVersionKind(obj.GroupVersionKind())
			if err := c.Get(ctx, client.ObjectKeyFromObject(obj), current); err != nil {
				return fmt.Errorf("get %s: %w", describe(obj), err)
			}
			desired = obj.DeepCopy()
			desired.SetResourceVersion(current.GetResourceVersion())
			return c.Update(ctx, desired, client.FieldValidation(strictValidation))
		})
	}
	if err != nil {
		return fmt.Errorf("create %s: %w", describe(obj), err)
	}
	if !hasStatus {
		return nil
	}
	// A controller (KCM's template controllers) may change the object between the create and the status write:
	// on a conflict the status is written again onto the object as it is now.
	err = retry.RetryOnConflict(retry.DefaultRetry, func() error {
		if err := unstructured.SetNestedField(desired.Object, status, "status"); err != nil {
			return fmt.Errorf("set status of %s: %w", describe(obj), err)
		}
		err := c.Status().Update(ctx, desired, client.FieldValidation(strictValidation))
		if apierrors.IsConflict(err) {
			current := &unstructured.Unstructured{}
			current.SetGroupVersionKind(obj.GroupVersionKind())
			if getErr := c.Get(ctx, client.ObjectKeyFromObject(obj), current); getErr != nil {
				return getErr
			}
			desired = current
		}
		return err
	})
	if err != nil && !apierrors.IsNotFound(err) {
		return fmt.Errorf("write status of %s: %w", describe(obj), err)
	}
	return nil
}

// strictCheck asks the API server to validate obj strictly without storing it (server-side apply, dry run): an
// unknown field, a wrong type or a CRD validation failure is an error naming the object. Helm's own writes prune
// unknown fields with a warning only, so every object an install would write is checked first.
func strictCheck(ctx context.Context, c client.Client, obj *unstructured.Unstructured) error {
	o := obj.DeepCopy()
	o.SetResourceVersion("")
	o.SetManagedFields(nil)
	//nolint:staticcheck // unstructured objects are applied through Patch; client.Apply needs apply configurations
	err := c.Patch(ctx, o, client.Apply, client.DryRunAll, client.ForceOwnership,
		client.FieldOwner(FieldManager+"-check"), client.FieldValidation(strictValidation))
	if err != nil {
		return fmt.Errorf("strict validation of %s: %w", describe(obj), err)
	}
	return nil
}

// describe names an object for messages: `Kind ns/name` or `Kind name`.
func describe(obj client.Object) string {
	kind := obj.GetObjectKind().GroupVersionKind().Kind
	if obj.GetNamespace() == "" {
		return fmt.Sprintf("%s %s", kind, obj.GetName())
	}
	return fmt.Sprintf("%s %s/%s", kind, obj.GetNamespace(), obj.GetName())
}
