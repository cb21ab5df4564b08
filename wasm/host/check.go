package host

import (
	"bytes"
	"context"
	"fmt"
	"io"

	"github.com/tracebook/tracebook/analysis/report"
	"github.com/tracebook/tracebook/wasm"
)

// Check re-runs the parity check on a written report: it extracts the
// bundle, the view and the module, renders the view natively and under
// wazero, and fails unless the module's rendering, the native one and the
// static report in the file are byte for byte the same. module overrides the
// report's own module when not nil.
func Check(ctx context.Context, page, module []byte) error {
	p, err := wasm.Extract(page)
	if err != nil {
		return err
	}
	return parity(ctx, "report", "bundle", p, module,
		func(w io.Writer) error { return report.RenderBundle(w, p.Bundle, p.View, report.HTMLFragment) },
		func(v *Viewer, view []byte) ([]byte, error) { return v.Render(ctx, p.Bundle, view) })
}

// parity is the check behind Check and CheckDiff: the static page p holds
// (a report or a diff, whose data is its bundle or input) equals native's
// rendering, and so does render's under wazero, with module or else the
// page's own.
func parity(ctx context.Context, kind, data string, p *wasm.Parts, module []byte,
	native func(io.Writer) error, render func(v *Viewer, view []byte) ([]byte, error)) error {
	var want bytes.Buffer
	if err := native(&want); err != nil {
		return fmt.Errorf("native rendering: %w", err)
	}
	if !bytes.Equal(want.Bytes(), p.Static) {
		return fmt.Errorf("the static %s in the file differs from the native rendering of its %s at byte %d", kind, data, firstDiff(want.Bytes(), p.Static))
	}
	if module == nil {
		module = p.Module
	}
	if len(module) == 0 {
		return fmt.Errorf("the %s carries no viewer module: %w", kind, wasm.ErrNoModule)
	}
	v, err := New(ctx, module)
	if err != nil {
		return err
	}
	defer v.Close(ctx)
	viewJSON, err := jsonView(p.View)
	if err != nil {
		return err
	}
	got, err := render(v, viewJSON)
	if err != nil {
		return err
	}
	if !bytes.Equal(got, want.Bytes()) {
		return fmt.Errorf("the viewer module's rendering of the %s differs from the native one at byte %d", kind, firstDiff(got, want.Bytes()))
	}
	return nil
}

func firstDiff(a, b []byte) int {
	n := min(len(a), len(b))
	for i := 0; i < n; i++ {
		if a[i] != b[i] {
			return i
		}
	}
	return n
}
