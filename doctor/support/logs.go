package support

import (
	"context"
	"fmt"
	"sort"

	appsv1 "k8s.io/api/apps/v1"
	corev1 "k8s.io/api/core/v1"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/apimachinery/pkg/labels"
	"k8s.io/apimachinery/pkg/selection"

	"kof.dev/kof/doctor/diagnose"
	kofv1 "kof.dev/kof/operator/api/v1beta1"
)

// exporterCharts are the chart names the exporters' Job Pods carry in ChartNameLabel (their selectorLabels,
// charts/cold-storage-exporter and charts/audit-logs-exporter).
var exporterCharts = []string{"cold-storage-exporter", "audit-logs-exporter"}

// logLimitBytes bounds one container's log in the bundle (PodLogOptions.LimitBytes).
const logLimitBytes = 8 << 20

// logs adds the recent logs of every container of the kof-operator's Pods (the Pods its Deployment selects) and of
// the exporters' Pods, as logs/<namespace>/<pod>/<container>.log. A list or log the caller may not read, or that
// cannot be served (no kubelet), is recorded in the manifest's Unreadable.
func (b *builder) logs(ctx context.Context, opts Options) {
	if opts.Clientset == nil {
		b.manifest.Unreadable = append(b.manifest.Unreadable, diagnose.Unreadable{What: "Pod logs",
			Reason: "no Pod client"})
		return
	}
	var pods []corev1.Pod
	var deps []appsv1.Deployment
	list, err := opts.Clientset.AppsV1().Deployments("").List(ctx, metav1.ListOptions{
		LabelSelector: labels.SelectorFromSet(kofv1.OperatorDeploymentLabels()).String()})
	if err != nil {
		b.unreadable("kof-operator Deployments (for their Pods' logs)", err)
	} else if deps = list.Items; len(deps) == 0 {
		b.manifest.Notes = append(b.manifest.Notes, "no kof-operator Deployment: no operator logs")
	}
	for _, d := range deps {
		sel, err := metav1.LabelSelectorAsSelector(d.Spec.Selector)
		if err != nil {
			b.unreadable("Pods of Deployment "+d.Namespace+"/"+d.Name, err)
			continue
		}
		got, err := opts.Clientset.CoreV1().Pods(d.Namespace).List(ctx, metav1.ListOptions{LabelSelector: sel.String()})
		if err != nil {
			b.unreadable("Pods of Deployment "+d.Namespace+"/"+d.Name, err)
			continue
		}
		if len(got.Items) == 0 {
			b.manifest.Notes = append(b.manifest.Notes, "Deployment "+d.Namespace+"/"+d.Name+" has no Pod")
		}
		pods = append(pods, got.Items...)
	}
	req, err := labels.NewRequirement(kofv1.ChartNameLabel, selection.In, exporterCharts)
	if err != nil {
		b.unreadable("exporter Pods", err)
	} else if got, err := opts.Clientset.CoreV1().Pods("").List(ctx, metav1.ListOptions{
		LabelSelector: labels.NewSelector().Add(*req).String()}); err != nil {
		b.unreadable("exporter Pods (for their logs)", err)
	} else {
		pods = append(pods, got.Items...)
	}
	sort.Slice(pods, func(i, j int) bool {
		return pods[i].Namespace+"/"+pods[i].Name < pods[j].Namespace+"/"+pods[j].Name
	})
	for _, p := range pods {
		for _, c := range p.Spec.Containers {
			b.containerLog(ctx, opts, &p, c.Name)
		}
	}
}

// containerLog adds the log of one container.
func (b *builder) containerLog(ctx context.Context, opts Options, p *corev1.Pod, container string) {
	lo := &corev1.PodLogOptions{Container: container, TailLines: &opts.LogLines, LimitBytes: ptr(int64(logLimitBytes))}
	if opts.LogSince > 0 {
		lo.SinceSeconds = ptr(int64(opts.LogSince.Seconds()))
	}
	what := fmt.Sprintf("log of container %s of Pod %s/%s", container, p.Namespace, p.Name)
	raw, err := opts.Clientset.CoreV1().Pods(p.Namespace).GetLogs(p.Name, lo).DoRaw(ctx)
	if err != nil {
		b.unreadable(what, err)
		return
	}
	b.add(fmt.Sprintf("logs/%s/%s/%s.log", p.Namespace, p.Name, container),
		fmt.Sprintf("%s (the newest %d lines)", what, opts.LogLines), 0, raw)
}

func ptr[T any](v T) *T { return &v }
