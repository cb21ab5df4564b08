package bridge

import (
	"bytes"
	"fmt"

	"github.com/tracebook/tracebook/analysis/diff"
	"github.com/tracebook/tracebook/analysis/report"
)

// RenderDiff decodes a diff's input (diff.EncodeInput; the last decoding is
// reused when the bytes are the same) and the view (the report's View JSON)
// and writes the diff's HTML fragment for that view: both sides compared
// again under the view's filter (diff.GenerateView), with the page's
// controls and the view's sort.
func RenderDiff(input, view []byte) (out []byte, err error) {
	defer func() {
		if r := recover(); r != nil {
			out, err = nil, fmt.Errorf("rendering the diff failed: %v", r)
		}
	}()
	v, err := report.ParseView(view)
	if err != nil {
		return nil, err
	}
	in, err := decodeInput(input)
	if err != nil {
		return nil, err
	}
	var buf bytes.Buffer
	if err := diff.GenerateView(&buf, in, v, diff.HTMLFragment); err != nil {
		return nil, err
	}
	return buf.Bytes(), nil
}

// The last diff input decoded: the viewer renders the same input for every
// view. GenerateView does not modify an Input.
var (
	lastInput   []byte
	lastDecoded *diff.Input
)

func decodeInput(input []byte) (*diff.Input, error) {
	if lastDecoded != nil && bytes.Equal(input, lastInput) {
		return lastDecoded, nil
	}
	in, err := diff.DecodeInput(input)
	if err != nil {
		return nil, err
	}
	lastInput, lastDecoded = bytes.Clone(input), in
	return in, nil
}

// DiffResult frames RenderDiff's outcome as Result frames Render's.
func DiffResult(input, view []byte) []byte {
	out, err := RenderDiff(input, view)
	if err != nil {
		return append([]byte{StatusError}, err.Error()...)
	}
	return append([]byte{StatusOK}, out...)
}
