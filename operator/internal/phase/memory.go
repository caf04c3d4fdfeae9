package phase

import (
	"sync"

	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/apimachinery/pkg/types"
	"k8s.io/client-go/tools/events"
	"sigs.k8s.io/controller-runtime/pkg/client"
)

// Memory publishes the conditions of objects whose status the operator may not write (ClusterDeployments belong to
// KCM, ConfigMaps have none): it keeps the last condition per object in memory and emits it as an Event
// (reason = condition reason, note = condition message) when it changes. Its zero value is ready; it is safe for
// concurrent reconciles. Recorder nil records nothing.
type Memory struct {
	Recorder events.EventRecorder
	// Action is the events.k8s.io action of the Events (kofv1.Action*).
	Action string

	mu   sync.Mutex
	last map[types.NamespacedName]metav1.Condition
}

// Publish records c for obj and emits an Event when it changed (Changed); it returns whether it did.
func (m *Memory) Publish(obj client.Object, c metav1.Condition) bool {
	key := client.ObjectKeyFromObject(obj)
	m.mu.Lock()
	if m.last == nil {
		m.last = map[types.NamespacedName]metav1.Condition{}
	}
	prev, had := m.last[key]
	var p *metav1.Condition
	if had {
		p = &prev
	}
	changed := Changed(p, c)
	if changed {
		c.LastTransitionTime = metav1.Now()
		m.last[key] = c
	}
	m.mu.Unlock()
	if changed && m.Recorder != nil {
		m.Recorder.Eventf(obj, nil, EventType(c), c.Reason, m.Action, "%s", c.Message)
	}
	return changed
}

// Condition returns the last condition published for key, and whether there is one.
func (m *Memory) Condition(key types.NamespacedName) (metav1.Condition, bool) {
	m.mu.Lock()
	defer m.mu.Unlock()
	c, ok := m.last[key]
	return c, ok
}

// Unsettled returns the keys whose last condition is not True, in no order.
func (m *Memory) Unsettled() []types.NamespacedName {
	m.mu.Lock()
	defer m.mu.Unlock()
	var out []types.NamespacedName
	for k, c := range m.last {
		if c.Status != metav1.ConditionTrue {
			out = append(out, k)
		}
	}
	return out
}

// Forget drops key (its object is gone), so that a new object of that key announces its first condition.
func (m *Memory) Forget(key types.NamespacedName) {
	m.mu.Lock()
	defer m.mu.Unlock()
	delete(m.last, key)
}
