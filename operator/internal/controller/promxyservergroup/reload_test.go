package promxyservergroup

import (
	"testing"

	corev1 "k8s.io/api/core/v1"
)

func TestReloadPort(t *testing.T) {
	withPorts := func(ports ...corev1.ContainerPort) *corev1.Pod {
		return &corev1.Pod{Spec: corev1.PodSpec{Containers: []corev1.Container{
			{Name: "reloader"}, {Name: "promxy", Ports: ports},
		}}}
	}
	tests := []struct {
		name       string
		configured int
		pod        *corev1.Pod
		want       int
	}{
		{"configured wins", 9999, withPorts(corev1.ContainerPort{Name: "http", ContainerPort: 8082}), 9999},
		{"named port", 0, withPorts(corev1.ContainerPort{Name: "metrics", ContainerPort: 9090}, corev1.ContainerPort{Name: "http", ContainerPort: 18082}), 18082},
		{"no named port", 0, withPorts(corev1.ContainerPort{Name: "web", ContainerPort: 9090}), DefaultReloadPort},
		{"no ports", 0, &corev1.Pod{}, DefaultReloadPort},
	}
	for _, tt := range tests {
		if got := reloadPort(tt.configured, tt.pod); got != tt.want {
			t.Errorf("%s: reloadPort = %d, want %d", tt.name, got, tt.want)
		}
	}
}
