package diagnose

import (
	"context"
	"fmt"

	"k8s.io/client-go/rest"

	"sigs.k8s.io/controller-runtime/pkg/client"
)

// Engine runs the whole diagnosis against one management cluster: Read, Predict, Diagnose.
type Engine struct {
	// Reader reads the management cluster (a direct client with Scheme's kinds); only get and list are used.
	Reader client.Reader
	// Read says where the umbrella release is; Predict configures the comparison.
	Read    ReadOptions
	Predict PredictOptions
}

// Run reads the management cluster, renders the prediction and returns the diagnosis. The error is a failure to
// read (an API error other than forbidden or not served); a failed prediction is a finding.
func (e *Engine) Run(ctx context.Context) (*Diagnosis, error) {
	snap, err := Read(ctx, e.Reader, e.Read)
	if err != nil {
		return nil, err
	}
	pred, info := Predict(ctx, snap, e.Predict)
	return Diagnose(Input{Live: snap, Predicted: pred, Prediction: info, ChartsDir: e.Predict.ChartsDir,
		Charts: e.Predict.Charts}), nil
}

// NewReader returns a direct (uncached) client for cfg with Scheme's kinds: the Reader of an Engine. Errors come
// from building the client (an unreachable or malformed configuration).
func NewReader(cfg *rest.Config) (client.Reader, error) {
	s, err := Scheme()
	if err != nil {
		return nil, err
	}
	c, err := client.New(cfg, client.Options{Scheme: s})
	if err != nil {
		return nil, fmt.Errorf("create client for %s: %w", cfg.Host, err)
	}
	return c, nil
}
