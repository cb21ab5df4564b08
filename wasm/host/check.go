package host

import (
	"bytes"
	"context"
	"fmt"

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
	var native bytes.Buffer
	if err := report.RenderBundle(&native, p.Bundle, p.View, report.HTMLFragment); err != nil {
		return fmt.Errorf("native rendering: %w", err)
	}
	if !bytes.Equal(native.Bytes(), p.Static) {
		return fmt.Errorf("the static report in the file differs from the native rendering of its bundle at byte %d", firstDiff(native.Bytes(), p.Static))
	}
	if module == nil {
		module = p.Module
	}
	if len(module) == 0 {
		return fmt.Errorf("the report carries no viewer module: %w", wasm.ErrNoModule)
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
	got, err := v.Render(ctx, p.Bundle, viewJSON)
	if err != nil {
		return err
	}
	if !bytes.Equal(got, native.Bytes()) {
		return fmt.Errorf("the viewer module's rendering differs from the native one at byte %d", firstDiff(got, native.Bytes()))
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
