package proxy

import (
	"encoding/json"
	"fmt"
	"slices"

	"kof.dev/kof/operator/outputs"
)

// Counters of a rule that count series of every tenant; they are removed for a tenant's view.
var fleetCounters = []string{"lastSamples", "lastSeriesFetched"}

// allowed reports whether labels (a JSON object of strings) carry a tenant of the scope.
func (s Scope) allowed(labels any) bool {
	m, _ := labels.(map[string]any)
	t, ok := m[outputs.TenantLabel].(string)
	return ok && slices.Contains(s.Tenants, t)
}

// FilterAlerts takes the body of Prometheus' `/api/v1/alerts` (`{"status", "data": {"alerts": [...]}}`) and returns
// it with only the alerts whose `tenant` label is one of the scope's; an admin scope gets body unchanged. The error
// names what is not the expected JSON.
func FilterAlerts(body []byte, s Scope) ([]byte, error) {
	if s.Admin {
		return body, nil
	}
	var doc map[string]any
	if err := json.Unmarshal(body, &doc); err != nil {
		return nil, fmt.Errorf("alerts response is not JSON: %w", err)
	}
	data, ok := doc["data"].(map[string]any)
	if !ok {
		return nil, fmt.Errorf("alerts response has no data object")
	}
	data["alerts"] = s.keepAlerts(data["alerts"])
	return json.Marshal(doc)
}

// keepAlerts returns the alerts (a JSON list) whose tenant is the scope's, never nil.
func (s Scope) keepAlerts(list any) []any {
	alerts, _ := list.([]any)
	out := []any{}
	for _, a := range alerts {
		if m, ok := a.(map[string]any); ok && s.allowed(m["labels"]) {
			out = append(out, a)
		}
	}
	return out
}

// FilterRules takes the body of Prometheus' `/api/v1/rules` and returns it for the scope (an admin scope gets body
// unchanged): a rule whose labels name another tenant is removed; a rule whose labels name no tenant (a fleet-wide
// rule) keeps its definition, but only the alerts of the scope's tenants, its state recomputed from them (firing,
// pending, inactive) and fleetCounters removed; groups left without rules are removed. The error names what is not
// the expected JSON.
func FilterRules(body []byte, s Scope) ([]byte, error) {
	if s.Admin {
		return body, nil
	}
	var doc map[string]any
	if err := json.Unmarshal(body, &doc); err != nil {
		return nil, fmt.Errorf("rules response is not JSON: %w", err)
	}
	data, ok := doc["data"].(map[string]any)
	if !ok {
		return nil, fmt.Errorf("rules response has no data object")
	}
	groups, _ := data["groups"].([]any)
	keptGroups := []any{}
	for _, g := range groups {
		gm, ok := g.(map[string]any)
		if !ok {
			continue
		}
		rules, _ := gm["rules"].([]any)
		kept := []any{}
		for _, r := range rules {
			rm, ok := r.(map[string]any)
			if !ok {
				continue
			}
			if labels, _ := rm["labels"].(map[string]any); labels != nil {
				if _, named := labels[outputs.TenantLabel]; named && !s.allowed(labels) {
					continue
				}
			}
			for _, c := range fleetCounters {
				delete(rm, c)
			}
			if _, has := rm["alerts"]; has {
				alerts := s.keepAlerts(rm["alerts"])
				rm["alerts"] = alerts
				rm["state"] = ruleState(alerts)
			}
			kept = append(kept, rm)
		}
		if len(kept) > 0 {
			gm["rules"] = kept
			keptGroups = append(keptGroups, gm)
		}
	}
	data["groups"] = keptGroups
	return json.Marshal(doc)
}

// ruleState is an alerting rule's state from its alerts: firing if one fires, else pending if one is pending,
// else inactive (Prometheus' rule states).
func ruleState(alerts []any) string {
	state := "inactive"
	for _, a := range alerts {
		switch a.(map[string]any)["state"] {
		case "firing":
			return "firing"
		case "pending":
			state = "pending"
		}
	}
	return state
}
