package window

import (
	"strings"
	"testing"
	"time"
)

func TestPlanFromEnv(t *testing.T) {
	def := Plan{Delay: 10 * time.Minute, CatchUp: 24}
	if p, err := PlanFromEnv(func(string) string { return "" }, def); err != nil || p != def {
		t.Errorf("unset: %+v, %v; want the defaults %+v", p, err, def)
	}
	env := map[string]string{EnvDelay: "5m", EnvCatchUpHours: "3"}
	if p, err := PlanFromEnv(func(k string) string { return env[k] }, def); err != nil ||
		p != (Plan{Delay: 5 * time.Minute, CatchUp: 3}) {
		t.Errorf("set: %+v, %v", p, err)
	}
	env = map[string]string{EnvDelay: "-1m", EnvCatchUpHours: "0"}
	_, err := PlanFromEnv(func(k string) string { return env[k] }, def)
	for _, want := range []string{`WINDOW_DELAY "-1m"`, `CATCH_UP_HOURS "0"`} {
		if err == nil || !strings.Contains(err.Error(), want) {
			t.Errorf("error %v does not name %s", err, want)
		}
	}
}
