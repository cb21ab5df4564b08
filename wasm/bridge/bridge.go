// Package bridge is the viewer's contract in plain Go: bytes of a Bundle
// (msgpack) and of a View (JSON) in, the report's HTML fragment out
// (Render, or Load once and RenderView per view); bytes of a diff's input
// and a View in, the diff's fragment out (RenderDiff). The
// viewer module (wasm/viewer) calls it from its exported render function and
// the native code calls the same function, so the browser and the wazero
// host render exactly what the native build renders.
//
// Memory plumbing (alloc, pointers, lengths) is the viewer's; loading the
// module is the host's (wasm/host) or the JS loader's. This package builds
// for GOOS=wasip1.
package bridge

import (
	"bytes"
	"errors"
	"fmt"

	"github.com/tracebook/tracebook/analysis/report"
)

// Status bytes that open every render result.
const (
	StatusOK    byte = 0 // the rest is the HTML fragment
	StatusError byte = 1 // the rest is an error message (plain text)
)

// Render decodes the bundle (reusing the last decoding when the bytes are
// the same) and the view and writes the report's HTML
// fragment for that view: the evidence is rolled up for the view's filter and
// the findings re-ranked with its thresholds.
func Render(bundle, view []byte) (out []byte, err error) {
	defer func() {
		// A bug must not take the viewer down: it becomes the error shown.
		if r := recover(); r != nil {
			out, err = nil, fmt.Errorf("rendering the report failed: %v", r)
		}
	}()
	v, err := report.ParseView(view)
	if err != nil {
		return nil, err
	}
	src, err := decode(bundle)
	if err != nil {
		return nil, err
	}
	var buf bytes.Buffer
	if err := report.GenerateView(&buf, src, v, report.HTMLFragment); err != nil {
		return nil, err
	}
	return buf.Bytes(), nil
}

// The last bundle decoded, kept because the viewer renders the same bundle
// for every view: decoding it is most of a render's work. GenerateView does
// not modify a Source, so reusing it renders the same bytes (the parity
// tests render several views with one module instance).
var (
	lastBundle []byte
	lastSource *report.Source
)

func decode(bundle []byte) (*report.Source, error) {
	if lastSource != nil && bytes.Equal(bundle, lastBundle) {
		return lastSource, nil
	}
	src, err := report.DecodeSource(bundle)
	if err != nil {
		return nil, err
	}
	lastBundle, lastSource = bytes.Clone(bundle), src
	return src, nil
}

// The bundle Load decoded, which RenderView renders.
var loaded *report.Source

// Load decodes bundle (an encoded report.Source, or a bare bundle) and
// keeps it for RenderView, in place of the one loaded before. bundle is not
// retained: the caller may release it.
func Load(bundle []byte) (err error) {
	defer func() {
		if r := recover(); r != nil {
			err = fmt.Errorf("decoding the bundle failed: %v", r)
		}
	}()
	src, err := report.DecodeSource(bundle)
	if err != nil {
		return err
	}
	loaded = src
	return nil
}

// RenderView writes the report's HTML fragment of the loaded bundle for
// view: Render without passing (or comparing) the bundle again.
func RenderView(view []byte) (out []byte, err error) {
	defer func() {
		if r := recover(); r != nil {
			out, err = nil, fmt.Errorf("rendering the report failed: %v", r)
		}
	}()
	if loaded == nil {
		return nil, errors.New("no bundle loaded: load one before rendering a view")
	}
	v, err := report.ParseView(view)
	if err != nil {
		return nil, err
	}
	var buf bytes.Buffer
	if err := report.GenerateView(&buf, loaded, v, report.HTMLFragment); err != nil {
		return nil, err
	}
	return buf.Bytes(), nil
}

// LoadResult frames Load's outcome as the module returns it: the status
// byte alone, or StatusError and the message.
func LoadResult(bundle []byte) []byte {
	if err := Load(bundle); err != nil {
		return append([]byte{StatusError}, err.Error()...)
	}
	return []byte{StatusOK}
}

// ViewResult frames RenderView's outcome as Result frames Render's.
func ViewResult(view []byte) []byte {
	out, err := RenderView(view)
	if err != nil {
		return append([]byte{StatusError}, err.Error()...)
	}
	return append([]byte{StatusOK}, out...)
}

// Result frames Render's outcome the way the module returns it: a status
// byte, then the fragment or the error message.
func Result(bundle, view []byte) []byte {
	out, err := Render(bundle, view)
	if err != nil {
		return append([]byte{StatusError}, err.Error()...)
	}
	return append([]byte{StatusOK}, out...)
}
