package host

import (
	"bytes"
	"context"
	"errors"
	"fmt"
	"io"

	"github.com/tetratelabs/wazero/api"

	"github.com/tracebook/tracebook/analysis/diff"
	"github.com/tracebook/tracebook/wasm"
	"github.com/tracebook/tracebook/wasm/bridge"
)

// RenderDiff calls the module's render_diff with a diff's input
// (diff.EncodeInput) and a view and returns the diff's HTML fragment, or
// the module's error message as an error.
func (v *Viewer) RenderDiff(ctx context.Context, input, view []byte) ([]byte, error) {
	fn := v.mod.ExportedFunction("render_diff")
	if fn == nil {
		return nil, errors.New("the viewer module does not export render_diff (it predates the interactive diff: rebuild it with wasm/build.sh)")
	}
	return v.call(ctx, fn, "render_diff", input, view)
}

// call copies data and view into the module, calls fn (the ABI of render
// and render_diff) and reads back the framed result.
func (v *Viewer) call(ctx context.Context, fn api.Function, name string, data, view []byte) ([]byte, error) {
	dp, err := v.put(ctx, data)
	if err != nil {
		return nil, err
	}
	defer v.free.Call(ctx, uint64(dp))
	vp, err := v.put(ctx, view)
	if err != nil {
		return nil, err
	}
	defer v.free.Call(ctx, uint64(vp))
	res, err := fn.Call(ctx, uint64(dp), uint64(len(data)), uint64(vp), uint64(len(view)))
	if err != nil {
		return nil, fmt.Errorf("calling %s: %w", name, err)
	}
	ptr, n := uint32(res[0]>>32), uint32(res[0])
	defer v.free.Call(ctx, uint64(ptr))
	out, ok := v.mod.Memory().Read(ptr, n)
	if !ok || n == 0 {
		return nil, fmt.Errorf("%s returned [%d, +%d) outside memory", name, ptr, n)
	}
	body := bytes.Clone(out[1:])
	if out[0] != bridge.StatusOK {
		return nil, fmt.Errorf("the viewer module: %s", body)
	}
	return body, nil
}

// CheckDiff is Check for a diff page (wasm.WriteDiff): it extracts the
// input, the view and the module, renders the view natively and under
// wazero, and fails unless the module's rendering, the native one and the
// static diff in the file are byte for byte the same. module overrides the
// page's own module when not nil.
func CheckDiff(ctx context.Context, page, module []byte) error {
	p, err := wasm.ExtractDiff(page)
	if err != nil {
		return err
	}
	return parity(ctx, "diff", "input", p, module,
		func(w io.Writer) error { return diff.RenderInput(w, p.Bundle, p.View, diff.HTMLFragment) },
		func(v *Viewer, view []byte) ([]byte, error) { return v.RenderDiff(ctx, p.Bundle, view) })
}
