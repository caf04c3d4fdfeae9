package diff

import (
	"context"
	"fmt"
	"sync"

	"k8s.io/apimachinery/pkg/apis/meta/v1/unstructured"

	"kof.dev/kof/chartlib/fleet"
)

// Side is one of the two inputs of a diff: its charts and its umbrella values (or layer 1 read from a live
// management cluster).
type Side struct {
	// Charts is where the KOF charts come from.
	Charts Source
	// ValuesFiles are the umbrella values files (helm -f, later files win).
	ValuesFiles []string
	// Layer1, when not nil, replaces the umbrella render: the umbrella's Flux objects of a live management cluster
	// (fleet.Options.Layer1).
	Layer1 []*unstructured.Unstructured
}

// Options are the inputs of Run.
type Options struct {
	// Old and New are the two sides.
	Old, New Side
	// Fleet holds what both sides share: Clusters, NamespaceObject, ReleaseName, Namespace, Mode, Env,
	// SveltosClusters and Workers. Its charts, values, layer 1 and validator are ignored: each side sets its own,
	// and a diff does not validate (`kof render` does).
	Fleet fleet.Options
}

// Run renders both sides of the same fleet (at once) and compares them (Fleets). The error names the side whose
// render failed as a whole, or a chart whose CRDs cannot be read.
func Run(ctx context.Context, opts Options) (*Report, error) {
	var olds, news *fleet.Fleet
	var oldErr, newErr error
	opts.Fleet.Memo = fleet.NewRenderMemo() // a service with the same chart and values on both sides renders once
	var wg sync.WaitGroup
	wg.Add(2)
	go func() {
		defer wg.Done()
		olds, oldErr = renderSide(ctx, opts.Fleet, opts.Old)
	}()
	go func() {
		defer wg.Done()
		news, newErr = renderSide(ctx, opts.Fleet, opts.New)
	}()
	wg.Wait()
	if oldErr != nil {
		return nil, fmt.Errorf("old side (%s): %w", opts.Old.Charts, oldErr)
	}
	if newErr != nil {
		return nil, fmt.Errorf("new side (%s): %w", opts.New.Charts, newErr)
	}
	return Fleets(olds, news)
}

// renderSide renders the fleet of base with s's charts, values and layer 1, without validation.
func renderSide(ctx context.Context, base fleet.Options, s Side) (*fleet.Fleet, error) {
	o := base
	o.ValuesFiles, o.Values, o.Layer1, o.Validator = s.ValuesFiles, nil, s.Layer1, nil
	if err := s.Charts.Apply(&o); err != nil {
		return nil, err
	}
	return fleet.Render(ctx, o)
}
