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
	"strings"
	"time"

	corev1 "k8s.io/api/core/v1"
	"k8s.io/apimachinery/pkg/types"
	"sigs.k8s.io/controller-runtime/pkg/client"
)

// ReloadPath is promxy's configuration reload endpoint (promxy serves the Prometheus web API, which has it).
const ReloadPath = "/-/reload"

// DefaultSettleDelay is how long after a config change promxy is reloaded a second time: the kubelet refreshes a
// mounted Secret only on its next sync (about a minute by default), so the first reload may still read the old file
// (https://kubernetes.io/docs/concepts/configuration/secret/#mounted-secrets-are-updated-automatically).
const DefaultSettleDelay = 90 * time.Second

// reloadState is what was reloaded for one config Secret.
type reloadState struct {
	digest  string    // sha256 of the config every pod reloaded
	at      time.Time // when
	settled bool      // the follow-up reload after the settle delay is done
}

// reloadIfChanged asks every Running promxy pod to reload when config differs from the one they last reloaded
// successfully in this process, and once more when the settle delay has passed since; it returns how long to wait
// for that follow-up (0 when none is due). A failed reload is returned (and retried with backoff); an unchanged,
// settled config never reloads again.
func (r *Reconciler) reloadIfChanged(ctx context.Context, key types.NamespacedName, config []byte) (time.Duration, error) {
	sum := sha256.Sum256(config)
	digest := hex.EncodeToString(sum[:])
	delay := r.SettleDelay
	if delay == 0 {
		delay = DefaultSettleDelay
	}
	now := time.Now
	if r.Now != nil {
		now = r.Now
	}
	r.mu.Lock()
	st, known := r.reloaded[key]
	r.mu.Unlock()
	if known && st.digest == digest {
		if st.settled {
			return 0, nil
		}
		if wait := delay - now().Sub(st.at); wait > 0 {
			return wait, nil
		}
	}
	if err := r.reloadPods(ctx); err != nil {
		return 0, err
	}
	next := reloadState{digest: digest, at: now(), settled: delay < 0 || (known && st.digest == digest)}
	r.mu.Lock()
	if r.reloaded == nil {
		r.reloaded = map[types.NamespacedName]reloadState{}
	}
	r.reloaded[key] = next
	r.mu.Unlock()
	if next.settled {
		return 0, nil
	}
	return delay, nil
}

// NoPodsRetry is how long a config no promxy pod could load waits before the next attempt.
const NoPodsRetry = 30 * time.Second

// noPodsError says that no promxy pod could be asked to reload: none matches the selector, or none is Running with
// an IP.
type noPodsError struct{ msg string }

func (e *noPodsError) Error() string { return e.msg }

// reloadPods POSTs ReloadPath to every Running promxy pod with an IP and returns the joined errors of those that
// failed, or a *noPodsError naming the selector and the pods it found when there is no such pod (correctness class
// 6: a config no pod loaded is no success).
func (r *Reconciler) reloadPods(ctx context.Context) error {
	var pods corev1.PodList
	if err := r.Client.List(ctx, &pods, client.InNamespace(r.Namespace), client.MatchingLabelsSelector{Selector: r.PodSelector}); err != nil {
		return fmt.Errorf("list promxy pods: %w", err)
	}
	httpClient := r.HTTPClient
	if httpClient == nil {
		httpClient = http.DefaultClient
	}
	var errs []error
	var skipped []string
	reloadable := 0
	for _, pod := range pods.Items {
		if pod.Status.Phase != corev1.PodRunning || pod.Status.PodIP == "" || !pod.DeletionTimestamp.IsZero() {
			skipped = append(skipped, fmt.Sprintf("%s %s", pod.Name, podState(&pod)))
			continue
		}
		reloadable++
		url := "http://" + net.JoinHostPort(pod.Status.PodIP, strconv.Itoa(reloadPort(r.ReloadPort, &pod))) + ReloadPath
		if err := post(ctx, httpClient, url); err != nil {
			errs = append(errs, fmt.Errorf("reload promxy pod %s: %w", pod.Name, err))
		}
	}
	if reloadable == 0 {
		found := "none"
		if len(skipped) > 0 {
			found = strings.Join(skipped, ", ")
		}
		return &noPodsError{msg: fmt.Sprintf("no Running promxy pod to reload: selector %s in namespace %s matches %s; "+
			"the config is reloaded once a promxy pod runs (KOF_PROMXY_POD_SELECTOR must select the promxy pods)",
			r.PodSelector, r.Namespace, found)}
	}
	return errors.Join(errs...)
}

// podState describes why pod cannot be reloaded: its phase, being deleted, or having no IP yet.
func podState(pod *corev1.Pod) string {
	switch {
	case !pod.DeletionTimestamp.IsZero():
		return "Terminating"
	case pod.Status.Phase == "":
		return string(corev1.PodPending)
	case pod.Status.Phase != corev1.PodRunning:
		return string(pod.Status.Phase)
	default:
		return "without an IP"
	}
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

// HTTPPortName is the container port name of promxy's HTTP listener in the kof-mothership chart.
const HTTPPortName = "http"

// reloadPort returns the port to reload pod on: configured when non-zero, else the pod's container port named
// HTTPPortName, else DefaultReloadPort.
func reloadPort(configured int, pod *corev1.Pod) int {
	if configured != 0 {
		return configured
	}
	for _, c := range pod.Spec.Containers {
		for _, p := range c.Ports {
			if p.Name == HTTPPortName && p.ContainerPort > 0 {
				return int(p.ContainerPort)
			}
		}
	}
	return DefaultReloadPort
}
