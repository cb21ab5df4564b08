//go:build wasip1

// Command viewer is the offline report's WebAssembly module: a GOOS=wasip1
// reactor (built with -buildmode=c-shared) whose exported functions take a
// Bundle and a View and return the report's HTML fragment, or a diff's input
// and a View and return the diff's, computed by the same analysis code the
// native binary runs (wasm/bridge).
//
// The ABI, for the JS loader (wasm/loader.js) and the wazero host (wasm/host):
//
//	_initialize()                      run once after instantiation
//	alloc(size i32) -> ptr i32         a buffer the caller fills; it stays alive until free
//	free(ptr i32)                      release a buffer from alloc or a result
//	render(bp, bl, vp, vl i32) -> i64  bundle bytes [bp, bp+bl), view JSON [vp, vp+vl);
//	                                   the result is (ptr << 32) | len of a buffer that
//	                                   starts with a status byte (0 ok: HTML follows;
//	                                   1 error: a message follows); free it when read
//	render_diff(ip, il, vp, vl i32) -> i64
//	                                   the same for a diff page: the diff's input
//	                                   (diff.EncodeInput) [ip, ip+il), view JSON [vp, vp+vl);
//	                                   the result is framed as render's (HTML: the diff)
//	load_bundle(bp, bl i32) -> i64     decode the bundle [bp, bp+bl) and keep it for
//	                                   render_view; the result is framed as render's,
//	                                   with nothing after a 0 status; bp may be freed
//	                                   once it returns
//	render_view(vp, vl i32) -> i64     render the loaded bundle for the view JSON
//	                                   [vp, vp+vl); the result is framed as render's
//
// render decodes the bundle on its first call and then compares the bundle
// it is passed with the one it decoded; load_bundle once, then render_view
// per view, skips the comparison and lets the caller free its copy.
//
// Memory may grow during any call: read memory.buffer again after each one.
package main

import (
	"runtime/debug"
	"unsafe"

	"github.com/tracebook/tracebook/wasm/bridge"
)

// live keeps the buffers handed out to the host reachable until freed: the
// Go heap does not move, so their addresses stay valid.
var live = map[uint32][]byte{}

func pin(b []byte) uint32 {
	if len(b) == 0 {
		b = make([]byte, 1)
	}
	p := uint32(uintptr(unsafe.Pointer(unsafe.SliceData(b))))
	live[p] = b
	return p
}

//go:wasmexport alloc
func alloc(size uint32) uint32 {
	return pin(make([]byte, size))
}

//go:wasmexport free
func free(ptr uint32) {
	delete(live, ptr)
}

//go:wasmexport render
func render(bundlePtr, bundleLen, viewPtr, viewLen uint32) uint64 {
	out := bridge.Result(view(bundlePtr, bundleLen), view(viewPtr, viewLen))
	p := pin(out)
	return uint64(p)<<32 | uint64(len(out))
}

//go:wasmexport render_diff
func renderDiff(inputPtr, inputLen, viewPtr, viewLen uint32) uint64 {
	out := bridge.DiffResult(view(inputPtr, inputLen), view(viewPtr, viewLen))
	p := pin(out)
	return uint64(p)<<32 | uint64(len(out))
}

//go:wasmexport load_bundle
func loadBundle(bundlePtr, bundleLen uint32) uint64 {
	debug.SetMemoryLimit(memLimitBase + memLimitPerByte*int64(bundleLen))
	out := bridge.LoadResult(view(bundlePtr, bundleLen))
	p := pin(out)
	return uint64(p)<<32 | uint64(len(out))
}

//go:wasmexport render_view
func renderView(viewPtr, viewLen uint32) uint64 {
	out := bridge.ViewResult(view(viewPtr, viewLen))
	p := pin(out)
	return uint64(p)<<32 | uint64(len(out))
}

// view returns the first n bytes of the buffer alloc returned at ptr.
func view(ptr, n uint32) []byte {
	if n == 0 {
		return nil
	}
	b, ok := live[ptr]
	if !ok || int(n) > len(b) {
		return nil
	}
	return b[:n]
}

// gcPercent is the module's GOGC. A render allocates a cell per table
// value; with one thread and no concurrent marking, collecting less often
// is most of the speed.
// The module collects garbage when its memory nears a limit, not as its
// heap grows (GOGC is off). A collection marks the whole decoded bundle,
// which here (one thread, no concurrent marking) costs about as much as a
// render, and what decoding allocates stays live, while a render leaves
// little garbage next to the bundle: so no collection runs while the
// bundle decodes nor for many renders after. The limit leaves room for the
// decoded bundle (a few bytes per byte of msgpack) and the rollups a
// report.Source keeps: memLimitBase, plus memLimitPerByte per byte of the
// bundle load_bundle takes.
const (
	memLimitBase    = 64 << 20
	memLimitPerByte = 32
)

func init() {
	debug.SetGCPercent(-1)
	debug.SetMemoryLimit(memLimitBase)
}

func main() {}
