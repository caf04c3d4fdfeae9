package window

import (
	"errors"
	"fmt"
	"strconv"
	"time"
)

// Env names of the plan, the same for both exporters (charts/cold-storage-exporter, charts/audit-logs-exporter).
const (
	EnvDelay        = "WINDOW_DELAY"
	EnvCatchUpHours = "CATCH_UP_HOURS"
)

// PlanFromEnv reads the plan through getenv over def (the exporter's defaults, kept for unset variables). It
// returns every malformed value at once, naming the variable; Validate checks the plan itself.
func PlanFromEnv(getenv func(string) string, def Plan) (Plan, error) {
	p := def
	var errs []error
	if v := getenv(EnvDelay); v != "" {
		d, err := ParseDuration(EnvDelay, v)
		if err != nil {
			errs = append(errs, err)
		} else {
			p.Delay = d
		}
	}
	if v := getenv(EnvCatchUpHours); v != "" {
		n, err := strconv.Atoi(v)
		if err != nil || n < 1 {
			errs = append(errs, fmt.Errorf("%s %q: want a whole number of hours, at least 1", EnvCatchUpHours, v))
		}
		p.CatchUp = n
	}
	return p, errors.Join(errs...)
}

// ParseDuration parses value v of variable name: a Go duration, zero or positive.
func ParseDuration(name, v string) (time.Duration, error) {
	d, err := time.ParseDuration(v)
	if err != nil || d < 0 {
		return 0, fmt.Errorf("%s %q: want a duration such as 10m or 1h", name, v)
	}
	return d, nil
}
