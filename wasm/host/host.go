// Package host runs the viewer module (wasm/viewer) under wazero, outside any
// browser: the tests use it to prove that the module renders exactly what
// the native code renders, and `tracebook report --check` uses it on a
// written report.
//
// It leaves building the module to wasm/build.sh and embedding it to package
// wasm; the ABI it drives is documented in wasm/viewer.
package host

import (
	"bytes"
	"compress/gzip"
	"context"
	"errors"
	"fmt"
	"io"

	"github.com/tetratelabs/wazero"
	"github.com/tetratelabs/wazero/api"
	"github.com/tetratelabs/wazero/imports/wasi_snapshot_preview1"

	"github.com/tracebook/tracebook/wasm/bridge"
)

// cache keeps compiled modules for the life of the process: compiling the
// viewer takes seconds, instantiating a compiled one milliseconds.
var cache = wazero.NewCompilationCache()

// Viewer is one instantiated viewer module. It is not safe for concurrent use.
type Viewer struct {
	rt     wazero.Runtime
	mod    api.Module
	alloc  api.Function
	free   api.Function
	render api.Function
	// load and renderView are the load_bundle and render_view exports;
	// nil in a module built before they existed.
	load       api.Function
	renderView api.Function
}

// Gunzip returns the module bytes of a gzip-compressed module (what the
// binary embeds and the report carries); uncompressed input is returned as is.
func Gunzip(module []byte) ([]byte, error) {
	if len(module) < 2 || module[0] != 0x1f || module[1] != 0x8b {
		return module, nil
	}
	zr, err := gzip.NewReader(bytes.NewReader(module))
	if err != nil {
		return nil, fmt.Errorf("decompressing the viewer module: %w", err)
	}
	defer zr.Close()
	out, err := io.ReadAll(zr)
	if err != nil {
		return nil, fmt.Errorf("decompressing the viewer module: %w", err)
	}
	return out, nil
}

// New compiles and instantiates module (raw or gzip-compressed wasm) with
// the WASI imports the Go runtime needs, runs its _initialize, and finds its
// exports. Close releases it.
func New(ctx context.Context, module []byte) (*Viewer, error) {
	wasmBytes, err := Gunzip(module)
	if err != nil {
		return nil, err
	}
	rt := wazero.NewRuntimeWithConfig(ctx, wazero.NewRuntimeConfig().WithCompilationCache(cache))
	if _, err := wasi_snapshot_preview1.Instantiate(ctx, rt); err != nil {
		rt.Close(ctx)
		return nil, fmt.Errorf("instantiating WASI: %w", err)
	}
	compiled, err := rt.CompileModule(ctx, wasmBytes)
	if err != nil {
		rt.Close(ctx)
		return nil, fmt.Errorf("compiling the viewer module: %w", err)
	}
	cfg := wazero.NewModuleConfig().WithName("viewer").WithStartFunctions("_initialize")
	mod, err := rt.InstantiateModule(withGrowingMemory(ctx), compiled, cfg)
	if err != nil {
		rt.Close(ctx)
		return nil, fmt.Errorf("instantiating the viewer module: %w", err)
	}
	v := &Viewer{rt: rt, mod: mod,
		alloc: mod.ExportedFunction("alloc"), free: mod.ExportedFunction("free"), render: mod.ExportedFunction("render")}
	v.load, v.renderView = mod.ExportedFunction("load_bundle"), mod.ExportedFunction("render_view")
	if v.alloc == nil || v.free == nil || v.render == nil {
		rt.Close(ctx)
		return nil, errors.New("the viewer module does not export alloc, free and render")
	}
	return v, nil
}

// MemorySize returns the size of the module's linear memory in bytes.
func (v *Viewer) MemorySize() uint32 { return v.mod.Memory().Size() }

// Close releases the module and its runtime.
func (v *Viewer) Close(ctx context.Context) error { return v.rt.Close(ctx) }

// Render calls the module's render with bundle and view and returns the HTML
// fragment, or the module's error message as an error.
func (v *Viewer) Render(ctx context.Context, bundle, view []byte) ([]byte, error) {
	bp, err := v.put(ctx, bundle)
	if err != nil {
		return nil, err
	}
	defer v.free.Call(ctx, uint64(bp))
	vp, err := v.put(ctx, view)
	if err != nil {
		return nil, err
	}
	defer v.free.Call(ctx, uint64(vp))
	res, err := v.render.Call(ctx, uint64(bp), uint64(len(bundle)), uint64(vp), uint64(len(view)))
	if err != nil {
		return nil, fmt.Errorf("calling render: %w", err)
	}
	ptr, n := uint32(res[0]>>32), uint32(res[0])
	defer v.free.Call(ctx, uint64(ptr))
	out, ok := v.mod.Memory().Read(ptr, n)
	if !ok || n == 0 {
		return nil, fmt.Errorf("render returned [%d, +%d) outside memory", ptr, n)
	}
	body := bytes.Clone(out[1:])
	if out[0] != bridge.StatusOK {
		return nil, fmt.Errorf("the viewer module: %s", body)
	}
	return body, nil
}

// Load calls the module's load_bundle: the module decodes bundle and keeps
// it for RenderView. The module's copy of the bytes is freed on return.
func (v *Viewer) Load(ctx context.Context, bundle []byte) error {
	if v.load == nil {
		return errors.New("the viewer module does not export load_bundle (built before it existed)")
	}
	bp, err := v.put(ctx, bundle)
	if err != nil {
		return err
	}
	defer v.free.Call(ctx, uint64(bp))
	res, err := v.load.Call(ctx, uint64(bp), uint64(len(bundle)))
	if err != nil {
		return fmt.Errorf("calling load_bundle: %w", err)
	}
	_, err = v.result(ctx, res[0])
	return err
}

// RenderView calls the module's render_view: the HTML fragment of the
// bundle Load loaded, for view.
func (v *Viewer) RenderView(ctx context.Context, view []byte) ([]byte, error) {
	if v.renderView == nil {
		return nil, errors.New("the viewer module does not export render_view (built before it existed)")
	}
	vp, err := v.put(ctx, view)
	if err != nil {
		return nil, err
	}
	defer v.free.Call(ctx, uint64(vp))
	res, err := v.renderView.Call(ctx, uint64(vp), uint64(len(view)))
	if err != nil {
		return nil, fmt.Errorf("calling render_view: %w", err)
	}
	return v.result(ctx, res[0])
}

// result reads and frees a framed result ((ptr << 32) | len): the bytes
// after the status byte, or the module's message as an error.
func (v *Viewer) result(ctx context.Context, r uint64) ([]byte, error) {
	ptr, n := uint32(r>>32), uint32(r)
	defer v.free.Call(ctx, uint64(ptr))
	out, ok := v.mod.Memory().Read(ptr, n)
	if !ok || n == 0 {
		return nil, fmt.Errorf("the module returned [%d, +%d) outside memory", ptr, n)
	}
	body := bytes.Clone(out[1:])
	if out[0] != bridge.StatusOK {
		return nil, fmt.Errorf("the viewer module: %s", body)
	}
	return body, nil
}

func (v *Viewer) put(ctx context.Context, b []byte) (uint32, error) {
	res, err := v.alloc.Call(ctx, uint64(len(b)))
	if err != nil {
		return 0, fmt.Errorf("calling alloc(%d): %w", len(b), err)
	}
	p := uint32(res[0])
	if !v.mod.Memory().Write(p, b) {
		return 0, fmt.Errorf("alloc(%d) returned %d outside memory", len(b), p)
	}
	return p, nil
}

// Imports lists the module's imported functions as "module.name", in the
// order the module declares them.
func Imports(ctx context.Context, module []byte) ([]string, error) {
	wasmBytes, err := Gunzip(module)
	if err != nil {
		return nil, err
	}
	rt := wazero.NewRuntimeWithConfig(ctx, wazero.NewRuntimeConfig().WithCompilationCache(cache))
	defer rt.Close(ctx)
	compiled, err := rt.CompileModule(ctx, wasmBytes)
	if err != nil {
		return nil, fmt.Errorf("compiling the viewer module: %w", err)
	}
	var out []string
	for _, f := range compiled.ImportedFunctions() {
		m, n, _ := f.Import()
		out = append(out, m+"."+n)
	}
	return out, nil
}
