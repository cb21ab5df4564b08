package diff

import (
	"bytes"
	"fmt"
	"io"
	"math"
	"sort"
	"strconv"
	"strings"

	"github.com/vmihailenco/msgpack/v5"

	"github.com/tracebook/tracebook/analysis/crossview"
	"github.com/tracebook/tracebook/analysis/evidence"
	"github.com/tracebook/tracebook/analysis/findings"
	"github.com/tracebook/tracebook/analysis/report"
	"github.com/tracebook/tracebook/analysis/table"
)

// Input is what the offline diff page carries and the viewer module
// re-renders for each view: both sides' evidence bundles (every area, at
// step granularity, since the diff's statistics are over steps) with the
// cross-views collected for them, and the filter they were collected under.
type Input struct {
	Filter     evidence.Filter
	Base, Test InputSide
}

// InputSide is one trace of an Input.
type InputSide struct {
	Name   string
	Bundle *evidence.Bundle
	// CrossViews are the side's cross-views: the first for the collection
	// filter, then any for other slices (one per rank, one per phase), so
	// that a view of such a slice compares trees. It may be empty.
	CrossViews []*crossview.Result
}

// inputMagic opens every encoded Input, so that a report's bundle is not
// taken for one (and the other way round).
const inputMagic = "tracebook-diff-input/1"

// EncodeInput encodes in for the diff page: a msgpack array of a marker,
// the filter, then per side its name, its bundle's own encoding
// (evidence.Encode) and its cross-views. The encoding is deterministic.
func EncodeInput(in *Input) ([]byte, error) {
	if in.Base.Bundle == nil || in.Test.Bundle == nil {
		return nil, fmt.Errorf("diff: encoding the input: a side has no evidence")
	}
	bb, err := evidence.Encode(in.Base.Bundle)
	if err != nil {
		return nil, err
	}
	tb, err := evidence.Encode(in.Test.Bundle)
	if err != nil {
		return nil, err
	}
	cvs := func(s InputSide) []*crossview.Result {
		if s.CrossViews == nil {
			return []*crossview.Result{}
		}
		return s.CrossViews
	}
	var buf bytes.Buffer
	enc := msgpack.NewEncoder(&buf)
	enc.SetSortMapKeys(true)
	enc.UseCompactInts(true)
	if err := enc.Encode([]any{inputMagic, in.Filter, in.Base.Name, bb, cvs(in.Base), in.Test.Name, tb, cvs(in.Test)}); err != nil {
		return nil, fmt.Errorf("diff: encoding the input: %w", err)
	}
	return buf.Bytes(), nil
}

// DecodeInput reads what EncodeInput wrote. Other bytes give an error,
// never a panic or an allocation their lengths claim but do not hold (a
// diff's page may have been edited; FuzzDecodeInput).
func DecodeInput(data []byte) (in *Input, err error) {
	defer func() {
		if p := recover(); p != nil {
			in, err = nil, fmt.Errorf("diff: decoding the input: malformed input (%v)", p)
		}
	}()
	// An array of 8 whose first element is the marker.
	if magic, _ := msgpack.Marshal(inputMagic); len(data) < 1+len(magic) || data[0] != 0x98 || !bytes.HasPrefix(data[1:], magic) {
		return nil, fmt.Errorf("diff: decoding the input: not a diff input (no %q marker)", inputMagic)
	}
	var parts struct {
		_msgpack       struct{} `msgpack:",as_array"`
		Magic          string
		Filter         evidence.Filter
		BaseName       string
		BaseBundle     []byte
		BaseCrossViews []*crossview.Result
		TestName       string
		TestBundle     []byte
		TestCrossViews []*crossview.Result
	}
	if err := evidence.CheckMsgpack(data); err != nil {
		return nil, fmt.Errorf("diff: decoding the input: %w", err)
	}
	if err := msgpack.Unmarshal(data, &parts); err != nil {
		return nil, fmt.Errorf("diff: decoding the input: %w", err)
	}
	b, err := evidence.Decode(parts.BaseBundle)
	if err != nil {
		return nil, fmt.Errorf("diff: decoding the base's bundle: %w", err)
	}
	t, err := evidence.Decode(parts.TestBundle)
	if err != nil {
		return nil, fmt.Errorf("diff: decoding the test's bundle: %w", err)
	}
	return &Input{Filter: parts.Filter,
		Base: InputSide{Name: parts.BaseName, Bundle: b, CrossViews: parts.BaseCrossViews},
		Test: InputSide{Name: parts.TestName, Bundle: t, CrossViews: parts.TestCrossViews}}, nil
}

// RenderInput decodes an encoded Input and writes its diff for view v in
// format f (GenerateView).
func RenderInput(w io.Writer, data []byte, v report.View, f Format) error {
	in, err := DecodeInput(data)
	if err != nil {
		return err
	}
	return GenerateView(w, in, v, f)
}

// GenerateView writes the diff of in for view v in format f: CompareView,
// then the printer with the view's sort of the change tables. The view is
// the report's (the same JSON the viewer module receives); the diff reads
// its Filter, Thresholds, Sort (tables step, class, kernel, other and
// nodes; columns as their headers name them, "-" first for descending)
// and Open ("sides" unfolds the two cross-views). HTMLFragment also
// carries the page's controls (rank and phase) and sort buttons. A filter
// that leaves nothing to compare renders, in HTML, as a message under the
// controls, so that the reader can choose another.
//
// The native page writer and the viewer module (wasm/bridge) both run it:
// the page's static diff and the module's renderings are the same bytes.
func GenerateView(w io.Writer, in *Input, v report.View, f Format) error {
	po := &pageOpts{sort: v.Sort, open: v.Open, controls: controlsOf(in, v.Filter)}
	d, err := CompareView(in, v)
	switch f {
	case Markdown:
		if err != nil {
			return err
		}
		return printMarkdown(w, d, po)
	case HTMLFragment:
		if err != nil {
			return printHTMLError(w, in, err, po)
		}
		return printHTML(w, d, po)
	}
	return fmt.Errorf("unexpected output format %v", f)
}

// CompareView compares the input's two sides for view v: the view's filter
// (its rank is a base rank; phase, step and stream select rows), the
// findings evaluated again for that slice with the view's threshold
// overrides (the collected ones when the slice is the collection's and no
// threshold is overridden), and the cross-views of that slice when they
// were collected. For the zero view of the collection filter it returns
// what Compare returns for the collected sides.
func CompareView(in *Input, v report.View) (*Diff, error) {
	if in == nil || in.Base.Bundle == nil || in.Test.Bundle == nil {
		return nil, fmt.Errorf("diff: a side has no evidence")
	}
	f := v.Filter
	f.Trace = ""
	f.WindowStartNs, f.WindowEndNs = in.Filter.WindowStartNs, in.Filter.WindowEndNs
	testRank := f.Rank
	if f.HasRank {
		pairs, _ := pairRanks(ranksOf(Side{Name: in.Base.Name, Bundle: in.Base.Bundle}), ranksOf(Side{Name: in.Test.Name, Bundle: in.Test.Bundle}), in.Base.Name, in.Test.Name)
		for _, p := range pairs {
			if p.Base == f.Rank {
				testRank = p.Test
			}
		}
	}
	reeval := !sameSlice(f, in.Filter) || len(v.Thresholds) > 0
	var sides [2]Side
	noTree := false
	for i, s := range []InputSide{in.Base, in.Test} {
		sf := f
		if i == 1 {
			sf.Rank = testRank
		}
		b := s.Bundle
		if reeval {
			// The rules on the slice's rollup, as CollectEvidence runs them
			// on the collection filter's (trace and window are the SQL's).
			nb := *b
			rf := sf
			rf.Trace, rf.WindowStartNs, rf.WindowEndNs = "", 0, 0
			if !f.HasRank {
				rf.Rank = 0
			}
			th := evidence.Thresholds{}
			for k, x := range b.Thresholds {
				th[k] = x
			}
			for k, x := range v.Thresholds {
				th[k] = x
			}
			nb.Findings = findings.Evaluate(evidence.Rollup(b, rf), th)
			b = &nb
		}
		sides[i] = Side{Name: s.Name, Bundle: b}
		sides[i].CrossView = pickCrossView(s.CrossViews, sf, len(ranksOf(sides[i])) == 1)
		if sides[i].CrossView == nil && len(s.CrossViews) > 0 {
			noTree = true
		}
	}
	if noTree {
		// A cross-view of another slice would compare time of other ranks
		// or phases with this slice's steps: leave the trees out.
		sides[0].CrossView, sides[1].CrossView = nil, nil
	}
	d, err := Compare(sides[0], sides[1], f)
	if err != nil {
		return nil, err
	}
	if noTree {
		for i, g := range d.Gaps {
			if g == gapNoCrossView {
				d.Gaps[i] = "the cross-views were collected for another slice than this filter (" + sliceText(f) + "): the trees are not compared; run tracebook diff with this filter to compare them"
			}
		}
	}
	return d, nil
}

// sameSlice reports whether a and b select the same rows of a bundle (the
// fields a view changes, and those Rollup applies).
func sameSlice(a, b evidence.Filter) bool {
	return a.HasRank == b.HasRank && (!a.HasRank || a.Rank == b.Rank) && a.Phase == b.Phase &&
		a.HasStep == b.HasStep && (!a.HasStep || a.Step == b.Step) && a.HasStream == b.HasStream && (!a.HasStream || a.Stream == b.Stream)
}

// pickCrossView returns the cross-view of exactly f's slice (rank, phase,
// step, stream), or nil. A cross-view of every rank is the slice of a rank
// when the side has only that one.
func pickCrossView(cvs []*crossview.Result, f evidence.Filter, oneRank bool) *crossview.Result {
	for _, cv := range cvs {
		s := cv.Slice
		rankOK := (s.HasRank == f.HasRank && (!f.HasRank || s.Rank == f.Rank)) || (f.HasRank && !s.HasRank && oneRank)
		if rankOK && s.Phase == f.Phase && s.HasStep == f.HasStep && (!f.HasStep || s.Step == f.Step) &&
			s.HasStream == f.HasStream && (!f.HasStream || s.Stream == f.Stream) {
			return cv
		}
	}
	return nil
}

func sliceText(f evidence.Filter) string {
	var p []string
	if f.HasRank {
		p = append(p, "rank "+strconv.Itoa(f.Rank))
	}
	if f.Phase != "" {
		p = append(p, "phase "+f.Phase)
	}
	if f.HasStep {
		p = append(p, "step "+strconv.Itoa(f.Step))
	}
	if f.HasStream {
		p = append(p, "stream "+strconv.FormatInt(f.Stream, 10))
	}
	if len(p) == 0 {
		return "every rank and phase"
	}
	return strings.Join(p, ", ")
}

// controls are the page's inputs: the base ranks that can be compared (with
// the test rank each is paired with) and the phases of either side.
type controls struct {
	ranks  []RankPair
	phases []string
	filter evidence.Filter
}

// controlsOf lists the ranks and phases a view of in can choose from; a
// rank or phase the collection filter fixed is the only one offered.
func controlsOf(in *Input, f evidence.Filter) *controls {
	c := &controls{ranks: []RankPair{}, phases: []string{}, filter: f}
	if in == nil || in.Base.Bundle == nil || in.Test.Bundle == nil {
		return c
	}
	base, test := Side{Name: in.Base.Name, Bundle: in.Base.Bundle}, Side{Name: in.Test.Name, Bundle: in.Test.Bundle}
	pairs, _ := pairRanks(ranksOf(base), ranksOf(test), base.Name, test.Name)
	for _, p := range pairs {
		if !in.Filter.HasRank || p.Base == in.Filter.Rank {
			c.ranks = append(c.ranks, p)
		}
	}
	if in.Filter.Phase != "" {
		c.phases = append(c.phases, in.Filter.Phase)
		return c
	}
	seen := map[string]bool{}
	for _, s := range []Side{base, test} {
		t := s.Bundle.Table("steps")
		if t == nil || t.Col("phase") < 0 {
			continue
		}
		for r := range t.Rows {
			if ph := evidence.Str(t, r, "phase"); ph != "" && !seen[ph] && evidence.Str(t, r, "trace") == s.Name {
				seen[ph] = true
				c.phases = append(c.phases, ph)
			}
		}
	}
	sort.Strings(c.phases)
	return c
}

// pageOpts are what a view adds to the printers: the page's controls, the
// sort of each table and the unfolded details. A nil *pageOpts prints the
// plain diff (the notebook's output, Write).
type pageOpts struct {
	controls *controls
	sort     map[string]string
	open     []string
}

// The sortable columns of the change tables and of the nodes table, as
// their headers name them.
var (
	changeCols = []string{"quantity", "base", "test", "change", "significance"}
	nodeCols   = []string{"view", "node", "base", "test", "change"}
)

func (po *pageOpts) controlsHTML(b *strings.Builder) {
	if po == nil || po.controls == nil {
		return
	}
	c := po.controls
	e := table.EscapeHTML
	b.WriteString(`<form class="tb-controls" id="tb-controls" autocomplete="off">` + "\n")
	b.WriteString(`<label>Rank<select data-tb="rank"><option value="">all</option>`)
	for _, p := range c.ranks {
		label := strconv.Itoa(p.Base)
		if p.Test != p.Base {
			label += " → " + strconv.Itoa(p.Test)
		}
		sel := ""
		if c.filter.HasRank && c.filter.Rank == p.Base {
			sel = " selected"
		}
		b.WriteString(`<option value="` + strconv.Itoa(p.Base) + `"` + sel + ">" + e(label) + "</option>")
	}
	b.WriteString("</select></label>\n")
	b.WriteString(`<label>Phase<select data-tb="phase"><option value="">all</option>`)
	for _, ph := range c.phases {
		sel := ""
		if c.filter.Phase == ph {
			sel = " selected"
		}
		b.WriteString(`<option value="` + e(ph) + `"` + sel + ">" + e(ph) + "</option>")
	}
	b.WriteString("</select></label>\n</form>\n")
}

// tableAttr is the data attribute that names a table on the page.
func (po *pageOpts) tableAttr(id string) string {
	if po == nil {
		return ""
	}
	return ` data-tb-table="` + id + `"`
}

// headers writes a table's header cells: plain in the notebook, sort
// buttons on the page with ▲ or ▼ on the sorted column.
func (po *pageOpts) headers(id string, cols []string) string {
	var b strings.Builder
	for _, c := range cols {
		if po == nil {
			b.WriteString("<th>" + c + "</th>")
			continue
		}
		mark := ""
		switch po.sort[id] {
		case c:
			mark = " ▲"
		case "-" + c:
			mark = " ▼"
		}
		b.WriteString(`<th><button type="button" data-tb-sort="` + id + `" data-tb-col="` + c + `">` + c + mark + "</button></th>")
	}
	return b.String()
}

func (po *pageOpts) detailsAttr(id string) string {
	if po == nil {
		return ""
	}
	for _, o := range po.open {
		if o == id {
			return ` data-tb-node="` + id + `" open`
		}
	}
	return ` data-tb-node="` + id + `"`
}

// sortedChanges returns rows sorted as the view's sort of table id says
// (stable, so ties keep the diff's order); rows itself when unsorted.
func (po *pageOpts) sortedChanges(id string, rows []Change) []Change {
	col, desc, ok := po.sortOf(id, changeCols)
	if !ok {
		return rows
	}
	out := append([]Change(nil), rows...)
	sort.SliceStable(out, func(i, j int) bool {
		a, b := out[i], out[j]
		var c int
		switch col {
		case "quantity":
			c = strings.Compare(a.Name, b.Name)
		case "base":
			c = table.CompareFloat(a.Base.Mean, b.Base.Mean)
		case "test":
			c = table.CompareFloat(a.Test.Mean, b.Test.Mean)
		case "change":
			c = table.CompareFloat(a.Delta, b.Delta)
		default:
			c = table.CompareFloat(sigKey(a), sigKey(b))
		}
		if desc {
			return c > 0
		}
		return c < 0
	})
	return out
}

func (po *pageOpts) sortedNodes(nodes []NodeChange) []NodeChange {
	col, desc, ok := po.sortOf("nodes", nodeCols)
	if !ok {
		return nodes
	}
	out := append([]NodeChange(nil), nodes...)
	sort.SliceStable(out, func(i, j int) bool {
		a, b := out[i], out[j]
		var c int
		switch col {
		case "view":
			c = strings.Compare(a.View, b.View)
		case "node":
			c = strings.Compare(a.Path, b.Path)
		case "base":
			c = table.CompareFloat(a.Base, b.Base)
		case "test":
			c = table.CompareFloat(a.Test, b.Test)
		default:
			c = table.CompareFloat(a.Delta, b.Delta)
		}
		if desc {
			return c > 0
		}
		return c < 0
	})
	return out
}

// sortOf reads the view's sort of table id: the column and whether it is
// descending; ok is false when the table is unsorted or the column unknown.
func (po *pageOpts) sortOf(id string, cols []string) (col string, desc, ok bool) {
	if po == nil {
		return "", false, false
	}
	spec := po.sort[id]
	col = strings.TrimPrefix(spec, "-")
	for _, c := range cols {
		if c == col {
			return col, spec != col, true
		}
	}
	return "", false, false
}

// sigKey orders changes by significance: |t|, a change without any
// step-to-step variation above every t, an unknown one below no change.
func sigKey(c Change) float64 {
	switch c.Verdict {
	case Significant:
		if c.T == 0 {
			return math.Inf(1)
		}
	case Unknown:
		return -1
	case NoChange:
		return 0
	}
	return math.Abs(c.T)
}

// printHTMLError is the fragment of a view that has nothing to compare:
// the title, the controls and the reason.
func printHTMLError(w io.Writer, in *Input, err error, po *pageOpts) error {
	var b strings.Builder
	d := &Diff{}
	if in != nil {
		d.Base, d.Test = in.Base.Name, in.Test.Name
	}
	b.WriteString(`<div class="tb-diff">` + "\n<h1>" + table.EscapeHTML(d.Title()) + "</h1>\n")
	po.controlsHTML(&b)
	b.WriteString(`<p class="tb-status tb-failed">Nothing to compare for this filter: ` + table.EscapeHTML(err.Error()) + "</p>\n</div>\n")
	_, werr := io.WriteString(w, b.String())
	return werr
}
