package report

import (
	"fmt"
	"io"

	"github.com/tracebook/tracebook/analysis/evidence"
)

// Format is an output format of the report.
type Format int

// The formats.
const (
	// Markdown is the notebook's text/markdown output and --md.
	Markdown Format = iota
	// HTML is a complete static page (no script); the interactive single
	// file is package wasm's.
	HTML
	// HTMLFragment is the report's <div>: what the static page holds and
	// what the viewer module renders for a view.
	HTMLFragment
)

func (f Format) String() string {
	switch f {
	case Markdown:
		return "markdown"
	case HTML:
		return "html"
	case HTMLFragment:
		return "html-fragment"
	}
	return "Format(" + fmt.Sprint(int(f)) + ")"
}

// View is what the reader chose: the filter, threshold overrides, the sort of
// each table and the unfolded tree nodes. It is the JSON the viewer module
// receives with the bundle; the zero View is the bundle's own slice with
// default thresholds.
type View struct {
	Filter evidence.Filter `json:"filter"`
	// Thresholds overrides rule thresholds by rule id.
	Thresholds map[string]float64 `json:"thresholds,omitempty"`
	// Sort is table name → column name, "-" first for descending.
	Sort map[string]string `json:"sort,omitempty"`
	// Open lists the tree node ids to show unfolded; nil = the default
	// (nodes over 10% of GPU time).
	Open []string `json:"open"`
	// MaxRows caps each evidence table; 0 = MaxRows.
	MaxRows int `json:"max_rows,omitempty"`
}

// ParseView decodes a View from its JSON; empty input is the zero View.
func ParseView(data []byte) (View, error) {
	if len(data) == 0 {
		return View{}, nil
	}
	doc, err := parseJSON(data)
	if err != nil {
		return View{}, err
	}
	return viewFrom(doc)
}

// Print writes an already built Doc in format f. It is the one place the
// format is chosen.
func Print(w io.Writer, d *Doc, f Format) error {
	switch f {
	case Markdown:
		return printMarkdown(w, d)
	case HTML:
		return printHTMLPage(w, d)
	case HTMLFragment:
		return printHTML(w, d)
	}
	return fmt.Errorf("unexpected output format %v", f)
}
