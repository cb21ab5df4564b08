package wasm

import (
	"bytes"
	"fmt"
	"io"

	"github.com/tracebook/tracebook/analysis/diff"
	"github.com/tracebook/tracebook/analysis/report"
)

// WriteDiff writes the single-file diff page for input (diff.EncodeInput)
// and view: the diff rendered natively for view (diff.RenderInput), the
// input, the viewer module and the loader, which calls the module's
// render_diff for each rank, phase or sort the reader chooses. The page is
// written as WriteReport writes a report; its root says data-tb-kind="diff".
func WriteDiff(w io.Writer, input []byte, view report.View, opt Options) error {
	var frag bytes.Buffer
	if err := diff.RenderInput(&frag, input, view, diff.HTMLFragment); err != nil {
		return err
	}
	title := opt.Title
	if title == "" {
		title = "tracebook diff"
	}
	return writePage(w, page{kind: kindDiff, noun: "diff", title: title, style: diff.Style,
		static: frag.Bytes(), view: view, data: input, module: opt.Module})
}

// DiffCSP is the diff page's Content-Security-Policy: CSP's, with the diff's
// style sheet.
func DiffCSP() string { return cspFor(diff.Style) }

// ExtractDiff reads the parts of a diff page that WriteDiff wrote; Bundle
// is the diff's input.
func ExtractDiff(page []byte) (*Parts, error) {
	p, err := extract(page)
	if err != nil {
		return nil, err
	}
	if p.Kind != kindDiff {
		return nil, fmt.Errorf("not a tracebook diff but a %s page (tracebook %s --check reads it)", p.Kind, p.Kind)
	}
	return p, nil
}
