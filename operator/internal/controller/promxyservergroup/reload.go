package promxyservergroup

import (
	"context"
	"crypto/sha256"
	"encoding/hex"
	"errors"
	"fmt"
	"io"
	"net"
	"net/http"
	"strconv"

	corev1 "k8s.io/api/core/v1"
	"k8s.io/apimachinery/pkg/types"
	"sigs.k8s.io/controller-runtime/pkg/client"
)

// ReloadPath is promxy's configuration reload endpoint (promxy serves the Prometheus web API, which has it).
const ReloadPath = "/-/reload"

// reloadIfChanged asks every Running promxy pod to reload when config differs from the one they last reloaded
// successfully in this process. A failed reload is returned (and retried with backoff); a success is remembered so
// that an unchanged config never reloads again.
func (r *Reconciler) reloadIfChanged(ctx context.Context, key types.NamespacedName, config []byte) error {
	sum := sha256.Sum256(config)
	digest := hex.EncodeToString(sum[:])
	r.mu.Lock()
	done := r.reloaded[key] == digest
	r.mu.Unlock()
	if done {
		return nil
	}
	if err := r.reload(ctx); err != nil {
		return err
	}
	r.mu.Lock()
	if r.reloaded == nil {
		r.reloaded = map[types.NamespacedName]string{}
	}
	r.reloaded[key] = digest
	r.mu.Unlock()
	return nil
}

// reload POSTs ReloadPath to every Running promxy pod with an IP and returns the joined errors of those that failed.
func (r *Reconciler) reload(ctx context.Context) error {
	var pods corev1.PodList
	if err := r.Client.List(ctx, &pods, client.InNamespace(r.Namespace), client.MatchingLabelsSelector{Selector: r.PodSelector}); err != nil {
		return fmt.Errorf("list promxy pods: %w", err)
	}
	httpClient := r.HTTPClient
	if httpClient == nil {
		httpClient = http.DefaultClient
	}
	port := r.ReloadPort
	if port == 0 {
		port = DefaultReloadPort
	}
	var errs []error
	for _, pod := range pods.Items {
		if pod.Status.Phase != corev1.PodRunning || pod.Status.PodIP == "" || !pod.DeletionTimestamp.IsZero() {
			continue
		}
		url := "http://" + net.JoinHostPort(pod.Status.PodIP, strconv.Itoa(port)) + ReloadPath
		if err := post(ctx, httpClient, url); err != nil {
			errs = append(errs, fmt.Errorf("reload promxy pod %s: %w", pod.Name, err))
		}
	}
	return errors.Join(errs...)
}

// post sends an empty POST to url and fails on transport errors and non-2xx answers.
func post(ctx context.Context, c *http.Client, url string) error {
	req, err := http.NewRequestWithContext(ctx, http.MethodPost, url, nil)
	if err != nil {
		return fmt.Errorf("build request %s: %w", url, err)
	}
	resp, err := c.Do(req)
	if err != nil {
		return fmt.Errorf("POST %s: %w", url, err)
	}
	defer resp.Body.Close()
	_, _ = io.Copy(io.Discard, io.LimitReader(resp.Body, 1<<16)) // drain for connection reuse; content unused
	if resp.StatusCode < 200 || resp.StatusCode > 299 {
		return fmt.Errorf("POST %s: status %s", url, resp.Status)
	}
	return nil
}
