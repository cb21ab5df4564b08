package diff

import (
	"errors"
	"fmt"
	"math"
	"sort"
	"strings"

	"github.com/tracebook/tracebook/analysis/crossview"
	"github.com/tracebook/tracebook/analysis/evidence"
	"github.com/tracebook/tracebook/analysis/internal/rx"
	"github.com/tracebook/tracebook/analysis/table"
)

// Side is one trace of the comparison: its name in the bundle's traces
// table, the evidence bundle collected for it (every area) and, when there
// is one, its cross-view.
type Side struct {
	Name      string
	Bundle    *evidence.Bundle
	CrossView *crossview.Result
}

// Stat summarises one quantity over the samples of a side: the number of
// samples (steps, or ranks × steps), their mean and their sample standard
// deviation (0 with one sample).
type Stat struct {
	N    int     `msgpack:"n" json:"n"`
	Mean float64 `msgpack:"mean" json:"mean"`
	Std  float64 `msgpack:"std" json:"std"`
}

// The verdicts of a Change.
const (
	Significant = "significant"  // |t| >= SignificantT
	WithinNoise = "within noise" // |t| < SignificantT
	NoChange    = "no change"    // the same value on both sides
	Unknown     = "unknown"      // one sample on a side: no step-to-step variation to compare with
	Missing     = "missing"      // no sample on a side (no step of that phase there): nothing to compare
)

// SignificantT is the |t| from which a change is significant: t is the
// change of the mean over the pooled standard error of the per-step values,
// sp·sqrt(1/nb + 1/nt) (Student's two-sample t; 2 is about the 95% level for
// the handful of steps a capture holds).
const SignificantT = 2.0

// Units of a Change's values, per step or per token.
const (
	UnitNs    = "ns"
	UnitCount = "count"
	UnitBytes = "bytes"
)

// Change is one quantity before and after, per step (per token for the
// "token" group).
type Change struct {
	// Group is step, token, phase, class, kernel, sync, copy or launch.
	Group string `msgpack:"group" json:"group"`
	Name  string `msgpack:"name" json:"name"`
	Unit  string `msgpack:"unit" json:"unit"`
	Base  Stat   `msgpack:"base" json:"base"`
	Test  Stat   `msgpack:"test" json:"test"`
	// Delta is Test.Mean - Base.Mean; Pct is it as a share of Base.Mean in
	// percent (HasPct false when the base is 0).
	Delta  float64 `msgpack:"delta" json:"delta"`
	Pct    float64 `msgpack:"pct" json:"pct"`
	HasPct bool    `msgpack:"has_pct" json:"has_pct"`
	// T is Delta over the pooled standard error; 0 when Verdict is Unknown
	// or NoChange, or when both sides have no variation at all.
	T       float64 `msgpack:"t" json:"t"`
	Verdict string  `msgpack:"verdict" json:"verdict"`
}

// Mismatch is one way the two traces' contexts differ.
type Mismatch struct {
	What string `msgpack:"what" json:"what"`
	Base string `msgpack:"base" json:"base"`
	Test string `msgpack:"test" json:"test"`
}

// RankPair is a base rank and the test rank compared with it.
type RankPair struct {
	Base int `msgpack:"base" json:"base"`
	Test int `msgpack:"test" json:"test"`
}

// NodeChange is a cross-view node whose time per step grew or shrank.
type NodeChange struct {
	View  string  `msgpack:"view" json:"view"` // gpu or cpu
	Path  string  `msgpack:"path" json:"path"` // frame names from the root, joined by " › "
	Base  float64 `msgpack:"base" json:"base"` // ns per step
	Test  float64 `msgpack:"test" json:"test"`
	Delta float64 `msgpack:"delta" json:"delta"`
	Sync  bool    `msgpack:"sync,omitempty" json:"sync,omitempty"`
}

// The statuses of a FindingMatch.
const (
	Resolved   = "resolved"   // in the base, not in the test
	New        = "new"        // in the test, not in the base
	Persisting = "persisting" // in both
)

// FindingMatch is a finding of either trace matched with the other's by
// rule id and scope (the rank, through the rank pairs, and the phase).
type FindingMatch struct {
	Status string            `msgpack:"status" json:"status"`
	Rule   string            `msgpack:"rule" json:"rule"`
	Rank   int               `msgpack:"rank" json:"rank"` // base rank; -1 every rank
	Phase  string            `msgpack:"phase,omitempty" json:"phase,omitempty"`
	Base   *evidence.Finding `msgpack:"base,omitempty" json:"base,omitempty"`
	Test   *evidence.Finding `msgpack:"test,omitempty" json:"test,omitempty"`
	// Note says what else changed: severity, status, the fix's scope.
	Note string `msgpack:"note,omitempty" json:"note,omitempty"`
}

// Diff is the comparison of a test trace with a base trace.
type Diff struct {
	Base   string          `msgpack:"base" json:"base"`
	Test   string          `msgpack:"test" json:"test"`
	Filter evidence.Filter `msgpack:"filter" json:"filter"`
	// Mismatches list how the contexts differ; a non-empty list is shown
	// at the top of every rendering.
	Mismatches []Mismatch `msgpack:"mismatches" json:"mismatches"`
	Ranks      []RankPair `msgpack:"ranks" json:"ranks"`
	// Normalised is "step" (values per step) or "capture" (no steps on a
	// side: values per capture, and a longer capture reads as slower).
	Normalised string `msgpack:"normalised" json:"normalised"`
	BaseSteps  int    `msgpack:"base_steps" json:"base_steps"`
	TestSteps  int    `msgpack:"test_steps" json:"test_steps"`
	// Notes explain how ranks, steps and phases were matched.
	Notes    []string     `msgpack:"notes" json:"notes"`
	Changes  []Change     `msgpack:"changes" json:"changes"`
	Nodes    []NodeChange `msgpack:"nodes" json:"nodes"`
	Verdicts []string     `msgpack:"verdicts" json:"verdicts"` // the cross-check of base and test, when both have a cross-view
	// Views are the base's and the test's cross-views, shown side by side
	// in HTML; nil when a side has none.
	Views    [2]*crossview.Result `msgpack:"views" json:"views"`
	Findings []FindingMatch       `msgpack:"findings" json:"findings"`
	// Gaps are what either trace cannot show, and what the diff cannot say.
	Gaps []string `msgpack:"gaps" json:"gaps"`
}

// TopKernels is how many kernels the diff compares one by one: those with
// the most GPU time per step on either side.
const TopKernels = 10

// TopNodes is how many cross-view nodes per view the diff lists.
const TopNodes = 10

// gapNoCrossView is the gap of a diff without a cross-view on a side.
const gapNoCrossView = "no cross-view on a side: the trees are not compared"

// ErrNoRanks says the two traces have no rank to compare.
var ErrNoRanks = errors.New("no rank to compare")

// Compare compares test with base under f. The phase, stream and step of f
// select rows, and its rank, when it has one, keeps the pair of that base
// rank only (trace and window were applied when each bundle was
// collected); f.Trace is ignored.
func Compare(base, test Side, f evidence.Filter) (*Diff, error) {
	if base.Bundle == nil || test.Bundle == nil {
		return nil, fmt.Errorf("diff: a side has no evidence")
	}
	d := &Diff{Base: base.Name, Test: test.Name, Filter: f, Mismatches: []Mismatch{}, Ranks: []RankPair{},
		Notes: []string{}, Changes: []Change{}, Nodes: []NodeChange{}, Verdicts: []string{}, Findings: []FindingMatch{}, Gaps: []string{}}
	f.Trace = ""
	bRanks, tRanks := ranksOf(base), ranksOf(test)
	d.Ranks, d.Notes = pairRanks(bRanks, tRanks, base.Name, test.Name)
	if len(d.Ranks) == 0 {
		return nil, fmt.Errorf("diff %s %s: %w (base ranks %v, test ranks %v)", base.Name, test.Name, ErrNoRanks, rankIDs(bRanks), rankIDs(tRanks))
	}
	if f.HasRank {
		var kept []RankPair
		for _, p := range d.Ranks {
			if p.Base == f.Rank {
				kept = append(kept, p)
			}
		}
		if len(kept) == 0 {
			return nil, fmt.Errorf("diff %s %s: rank %d is not among the compared ranks (%s)", base.Name, test.Name, f.Rank, table.Runs(baseRanks(d.Ranks), 12))
		}
		d.Ranks = kept
		d.Notes = append(d.Notes, fmt.Sprintf("rank filter: base rank %d compared with test rank %d", kept[0].Base, kept[0].Test))
	}
	d.Mismatches = compareContexts(base, test, d.Ranks)

	bs := collect(base, f, d.Ranks, true)
	ts := collect(test, f, d.Ranks, false)
	d.BaseSteps, d.TestSteps = len(bs.samples), len(ts.samples)
	d.Normalised = "step"
	if (f.Phase != "" || f.HasStep) && (!bs.perStep || !ts.perStep) {
		empty := base.Name
		if bs.perStep {
			empty = test.Name
		}
		return nil, fmt.Errorf("diff: no step of %s passes the filter (%s)", empty, filterString(f))
	}
	if !bs.perStep || !ts.perStep {
		d.Normalised = "capture"
		d.Gaps = append(d.Gaps, "no steps on a side (no ProfilerStep#, execute_* or step[...] annotations): values are per capture, so a longer capture reads as slower")
		// Both sides per capture, so that they compare alike.
		bs = collectWhole(base, f, d.Ranks, true)
		ts = collectWhole(test, f, d.Ranks, false)
		d.BaseSteps, d.TestSteps = len(bs.samples), len(ts.samples)
	}
	d.Notes = append(d.Notes, stepNote(bs, ts)...)
	if d.BaseSteps < 2 || d.TestSteps < 2 {
		d.Gaps = append(d.Gaps, "one step (or capture) on a side: no step-to-step variation to compare a change with, so its significance is unknown (not zero)")
	}
	d.Changes = changes(bs, ts)
	if serving(bRanks) || serving(tRanks) {
		perToken := false
		for _, c := range d.Changes {
			perToken = perToken || c.Group == "token"
		}
		if !perToken {
			d.Gaps = append(d.Gaps, "serving trace whose step annotations do not give token counts on every step: values are per step, not per token, so a change of batch size reads as a change of speed")
		}
	}
	d.Nodes = nodeChanges(base.CrossView, test.CrossView, len(bs.samples), len(ts.samples), stepMean(d.Changes))
	if base.CrossView != nil && test.CrossView != nil {
		d.Verdicts = []string{verdictLine(base.CrossView), verdictLine(test.CrossView)}
		d.Views = [2]*crossview.Result{base.CrossView, test.CrossView}
	} else {
		d.Gaps = append(d.Gaps, gapNoCrossView)
	}
	d.Findings = matchFindings(base, test, d.Ranks)
	d.Gaps = append(d.Gaps, sideGaps("base", base)...)
	d.Gaps = append(d.Gaps, sideGaps("test", test)...)
	return d, nil
}

// ranksOf returns the traces-table view of the side's ranks.
func ranksOf(s Side) []evidence.RankInfo {
	var out []evidence.RankInfo
	for _, ri := range evidence.Ranks(s.Bundle.Traces) {
		if ri.Trace == s.Name {
			out = append(out, ri)
		}
	}
	return out
}

func rankIDs(rs []evidence.RankInfo) []int {
	out := []int{}
	for _, r := range rs {
		out = append(out, r.Rank)
	}
	return out
}

func baseRanks(ps []RankPair) []int {
	out := []int{}
	for _, p := range ps {
		out = append(out, p.Base)
	}
	return out
}

// pairRanks matches ranks by number; two single-rank traces whose ranks
// differ are paired anyway, with a note.
func pairRanks(b, t []evidence.RankInfo, bn, tn string) ([]RankPair, []string) {
	var pairs []RankPair
	var notes []string
	in := map[int]bool{}
	for _, r := range t {
		in[r.Rank] = true
	}
	var bOnly, tOnly []int
	matched := map[int]bool{}
	for _, r := range b {
		if in[r.Rank] {
			pairs = append(pairs, RankPair{r.Rank, r.Rank})
			matched[r.Rank] = true
		} else {
			bOnly = append(bOnly, r.Rank)
		}
	}
	for _, r := range t {
		if !matched[r.Rank] {
			tOnly = append(tOnly, r.Rank)
		}
	}
	if len(pairs) == 0 && len(b) == 1 && len(t) == 1 {
		notes = append(notes, fmt.Sprintf("ranks: %s has only rank %d and %s only rank %d; they are compared with each other", bn, b[0].Rank, tn, t[0].Rank))
		return []RankPair{{b[0].Rank, t[0].Rank}}, notes
	}
	if len(bOnly) > 0 {
		notes = append(notes, fmt.Sprintf("ranks only in the base (left out): %v", bOnly))
	}
	if len(tOnly) > 0 {
		notes = append(notes, fmt.Sprintf("ranks only in the test (left out): %v", tOnly))
	}
	if len(pairs) > 0 {
		ids := make([]string, len(pairs))
		for i, p := range pairs {
			ids[i] = fmt.Sprint(p.Base)
		}
		notes = append(notes, "ranks matched by number: "+strings.Join(ids, ", "))
	}
	return pairs, notes
}

// compareContexts lists the differences between the contexts the two
// traces were captured in.
func compareContexts(base, test Side, pairs []RankPair) []Mismatch {
	bc, tc := contextOf(base, pairs, true), contextOf(test, pairs, false)
	out := []Mismatch{}
	for _, k := range contextOrder {
		if bc[k] != tc[k] {
			out = append(out, Mismatch{What: k, Base: orUnknown(bc[k]), Test: orUnknown(tc[k])})
		}
	}
	var keys []string
	seen := map[string]bool{}
	for _, m := range []map[string]string{base.Bundle.Context, test.Bundle.Context} {
		for k := range m {
			if !seen[k] {
				seen[k] = true
				keys = append(keys, k)
			}
		}
	}
	sort.Strings(keys)
	for _, k := range keys {
		if b, t := base.Bundle.Context[k], test.Bundle.Context[k]; b != t {
			out = append(out, Mismatch{What: "%context " + k, Base: orUnknown(b), Test: orUnknown(t)})
		}
	}
	return out
}

var contextOrder = []string{"GPU model", "world size", "ranks loaded", "producer", "platform", "trace format",
	"python stacks captured", "sync events captured", "CUDA/HIP graphs", "step annotations"}

func orUnknown(s string) string {
	if s == "" {
		return "(not recorded)"
	}
	return s
}

func contextOf(s Side, pairs []RankPair, isBase bool) map[string]string {
	want := map[int]bool{}
	for _, p := range pairs {
		if isBase {
			want[p.Base] = true
		} else {
			want[p.Test] = true
		}
	}
	vals := map[string][]string{}
	add := func(k, v string) {
		for _, x := range vals[k] {
			if x == v {
				return
			}
		}
		vals[k] = append(vals[k], v)
	}
	all := ranksOf(s)
	for _, ri := range all {
		if !want[ri.Rank] {
			continue
		}
		add("GPU model", ri.GPUModel)
		add("producer", ri.Producer)
		add("platform", ri.Platform)
		add("trace format", ri.Format)
		add("python stacks captured", yesNo(ri.HasPythonStacks))
		add("sync events captured", yesNo(ri.HasSyncEvents))
		add("CUDA/HIP graphs", yesNo(ri.HasGraphs))
	}
	if ov := s.Bundle.Table("overview"); ov != nil {
		for r := range ov.Rows {
			if evidence.Str(ov, r, "trace") != s.Name || !want[int(evidence.Int(ov, r, "rank"))] {
				continue
			}
			add("world size", evidence.Str(ov, r, "world_size"))
			add("step annotations", evidence.Str(ov, r, "step_source"))
		}
	}
	out := map[string]string{}
	for k, v := range vals {
		sort.Strings(v)
		out[k] = strings.Join(v, " / ")
	}
	out["ranks loaded"] = fmt.Sprint(len(all))
	return out
}

func yesNo(b bool) string {
	if b {
		return "yes"
	}
	return "no"
}

// sample is one step of one rank (or, per capture, one rank).
type sample struct {
	rank, step int
	phase      string
	wall       float64
	tokens     float64
}

// sideData holds a side's samples and, per quantity, its value in each.
type sideData struct {
	name    string
	perStep bool
	samples []sample
	idx     map[[2]int]int
	values  map[string][]float64 // quantity key -> value per sample
	kernels map[string]bool      // quantity keys of kernel names
	source  string
}

const wholeStep = math.MinInt32

func (sd *sideData) add(key string, rank, step int, v float64) {
	if !sd.perStep {
		step = wholeStep
	}
	i, ok := sd.idx[[2]int{rank, step}]
	if !ok {
		return
	}
	vs := sd.values[key]
	if vs == nil {
		vs = make([]float64, len(sd.samples))
		sd.values[key] = vs
	}
	vs[i] += v
}

// rankMap maps a side's rank to the base rank of its pair (-1: not paired).
func rankMap(pairs []RankPair, isBase bool) map[int]int {
	m := map[int]int{}
	for _, p := range pairs {
		if isBase {
			m[p.Base] = p.Base
		} else {
			m[p.Test] = p.Base
		}
	}
	return m
}

// rowsOf calls fn for every row of the side's area table that passes f, with
// the row's base rank and step.
func rowsOf(s Side, area string, f evidence.Filter, ranks map[int]int, fn func(t *table.Table, r, rank, step int)) {
	t := s.Bundle.Table(area)
	if t == nil {
		return
	}
	cp, cst, cs := t.Col("phase"), t.Col("stream"), t.Col("step")
	for r := range t.Rows {
		if evidence.Str(t, r, "trace") != s.Name {
			continue
		}
		rank, ok := ranks[int(evidence.Int(t, r, "rank"))]
		if !ok {
			continue
		}
		if f.Phase != "" && cp >= 0 && evidence.Str(t, r, "phase") != f.Phase {
			continue
		}
		if f.HasStream && cst >= 0 && evidence.Int(t, r, "stream") != f.Stream {
			continue
		}
		step := -1
		if cs >= 0 {
			step = int(evidence.Int(t, r, "step"))
		}
		if f.HasStep && cs >= 0 && step != f.Step {
			continue
		}
		fn(t, r, rank, step)
	}
}

// collect reads the side's steps as samples and every quantity per sample.
func collect(s Side, f evidence.Filter, pairs []RankPair, isBase bool) *sideData {
	ranks := rankMap(pairs, isBase)
	sd := &sideData{name: s.Name, perStep: true, idx: map[[2]int]int{}, values: map[string][]float64{}, kernels: map[string]bool{}}
	sources := map[string]bool{}
	rowsOf(s, "steps", f, ranks, func(t *table.Table, r, rank, step int) {
		k := [2]int{rank, step}
		if _, dup := sd.idx[k]; dup || step < 0 {
			return
		}
		sd.idx[k] = len(sd.samples)
		sd.samples = append(sd.samples, sample{rank: rank, step: step, phase: evidence.Str(t, r, "phase"),
			wall: evidence.Float(t, r, "wall_ns"), tokens: evidence.Float(t, r, "ctx_tok") + evidence.Float(t, r, "gen_tok")})
		sources[evidence.Str(t, r, "source")] = true
	})
	var src []string
	for k := range sources {
		src = append(src, k)
	}
	sort.Strings(src)
	sd.source = strings.Join(src, "+")
	if len(sd.samples) == 0 {
		sd.perStep = false
		return sd
	}
	fill(s, f, ranks, sd)
	return sd
}

// collectWhole makes one sample per rank: the whole capture.
func collectWhole(s Side, f evidence.Filter, pairs []RankPair, isBase bool) *sideData {
	ranks := rankMap(pairs, isBase)
	sd := &sideData{name: s.Name, idx: map[[2]int]int{}, values: map[string][]float64{}, kernels: map[string]bool{}, source: "capture"}
	for _, p := range pairs {
		sd.idx[[2]int{p.Base, wholeStep}] = len(sd.samples)
		sd.samples = append(sd.samples, sample{rank: p.Base, step: -1})
	}
	// The wall time of a capture is the rank's GPU span.
	rowsOf(s, "ranks", f, ranks, func(t *table.Table, r, rank, _ int) {
		if i, ok := sd.idx[[2]int{rank, wholeStep}]; ok {
			sd.samples[i].wall += evidence.Float(t, r, "busy_ns") + evidence.Float(t, r, "idle_ns")
		}
	})
	fill(s, f, ranks, sd)
	return sd
}

// Quantity keys: group \x00 name \x00 unit.
func qkey(group, name, unit string) string { return group + "\x00" + name + "\x00" + unit }

func fill(s Side, f evidence.Filter, ranks map[int]int, sd *sideData) {
	step := qkey("step", "step time", UnitNs)
	for i, sm := range sd.samples {
		sd.add(step, sm.rank, stepOf(sd, i), sm.wall)
	}
	rowsOf(s, "ranks", f, ranks, func(t *table.Table, r, rank, st int) {
		sd.add(qkey("step", "GPU busy", UnitNs), rank, st, evidence.Float(t, r, "busy_ns"))
		sd.add(qkey("step", "GPU idle", UnitNs), rank, st, evidence.Float(t, r, "idle_ns"))
	})
	rowsOf(s, "kernels", f, ranks, func(t *table.Table, r, rank, st int) {
		v := evidence.Float(t, r, "total_ns")
		sd.add(qkey("class", evidence.Str(t, r, "class"), UnitNs), rank, st, v)
		k := qkey("kernel", evidence.Str(t, r, "name"), UnitNs)
		sd.kernels[k] = true
		sd.add(k, rank, st, v)
	})
	rowsOf(s, "sync", f, ranks, func(t *table.Table, r, rank, st int) {
		if !evidence.Bool(t, r, "blocking") {
			return
		}
		sd.add(qkey("sync", "blocking sync calls", UnitCount), rank, st, evidence.Float(t, r, "count"))
		sd.add(qkey("sync", "host blocked in syncs", UnitNs), rank, st, evidence.Float(t, r, "blocked_ns"))
		sd.add(qkey("sync", "GPU gaps opened by syncs", UnitNs), rank, st, evidence.Float(t, r, "gpu_gap_ns"))
	})
	rowsOf(s, "memcpy", f, ranks, func(t *table.Table, r, rank, st int) {
		sd.add(qkey("copy", "copies and memsets", UnitCount), rank, st, evidence.Float(t, r, "count"))
		sd.add(qkey("copy", "copy GPU time", UnitNs), rank, st, evidence.Float(t, r, "total_ns"))
		sd.add(qkey("copy", "bytes copied", UnitBytes), rank, st, evidence.Float(t, r, "bytes"))
	})
	rowsOf(s, "launch", f, ranks, func(t *table.Table, r, rank, st int) {
		sd.add(qkey("launch", "launches", UnitCount), rank, st, evidence.Float(t, r, "launches"))
		sd.add(qkey("launch", "launch call time", UnitNs), rank, st, evidence.Float(t, r, "cpu_ns"))
	})
}

func stepOf(sd *sideData, i int) int {
	if !sd.perStep {
		return wholeStep
	}
	return sd.samples[i].step
}

// stat summarises values at the given sample indexes (all when idx is nil).
func stat(vals []float64, n int, idx []int) Stat {
	get := func(i int) float64 {
		if vals == nil {
			return 0
		}
		return vals[i]
	}
	if idx == nil {
		idx = make([]int, n)
		for i := range idx {
			idx[i] = i
		}
	}
	s := Stat{N: len(idx)}
	if s.N == 0 {
		return s
	}
	for _, i := range idx {
		s.Mean += get(i)
	}
	s.Mean /= float64(s.N)
	if s.N > 1 {
		var ss float64
		for _, i := range idx {
			d := get(i) - s.Mean
			ss += d * d
		}
		s.Std = math.Sqrt(ss / float64(s.N-1))
	}
	return s
}

// change compares two stats.
func change(group, name, unit string, b, t Stat) Change {
	if b.N == 0 || t.N == 0 {
		// Not measured on a side is a gap, not a zero.
		return Change{Group: group, Name: name, Unit: unit, Base: b, Test: t, Verdict: Missing}
	}
	c := Change{Group: group, Name: name, Unit: unit, Base: b, Test: t, Delta: t.Mean - b.Mean}
	if b.Mean != 0 {
		c.Pct, c.HasPct = 100*c.Delta/b.Mean, true
	}
	switch {
	case c.Delta == 0:
		c.Verdict = NoChange
	case b.N < 2 || t.N < 2:
		c.Verdict = Unknown
	default:
		sp := math.Sqrt((float64(b.N-1)*b.Std*b.Std + float64(t.N-1)*t.Std*t.Std) / float64(b.N+t.N-2))
		se := sp * math.Sqrt(1/float64(b.N)+1/float64(t.N))
		if se == 0 {
			c.Verdict = Significant
			break
		}
		c.T = c.Delta / se
		if math.Abs(c.T) >= SignificantT {
			c.Verdict = Significant
		} else {
			c.Verdict = WithinNoise
		}
	}
	return c
}

// changes computes every quantity's change, in the order the renderings
// show them.
func changes(b, t *sideData) []Change {
	out := []Change{}
	nb, nt := len(b.samples), len(t.samples)
	one := func(k string) {
		parts := strings.SplitN(k, "\x00", 3)
		out = append(out, change(parts[0], parts[1], parts[2], stat(b.values[k], nb, nil), stat(t.values[k], nt, nil)))
	}
	for _, n := range []string{"step time", "GPU busy", "GPU idle"} {
		one(qkey("step", n, UnitNs))
	}
	// Per token, where every step of both sides names its tokens.
	if b.perStep && t.perStep && allTokens(b) && allTokens(t) {
		out = append(out, change("token", "step time per token", UnitNs, perToken(b), perToken(t)))
	}
	// Per phase, where the steps have several phases and no phase was asked for.
	phases := map[string]bool{}
	for _, sd := range []*sideData{b, t} {
		for _, s := range sd.samples {
			if s.phase != "" {
				phases[s.phase] = true
			}
		}
	}
	if len(phases) > 1 {
		var ps []string
		for p := range phases {
			ps = append(ps, p)
		}
		sort.Strings(ps)
		for _, p := range ps {
			k := qkey("step", "step time", UnitNs)
			out = append(out, change("phase", "step time ("+p+")", UnitNs, stat(b.values[k], nb, phaseIdx(b, p)), stat(t.values[k], nt, phaseIdx(t, p))))
		}
	}
	for _, c := range []string{"COMP", "COMM", "MEM"} {
		one(qkey("class", c, UnitNs))
	}
	// Top kernels by GPU time per step on either side.
	type kv struct {
		k string
		v float64
	}
	var ks []kv
	seen := map[string]bool{}
	for _, sd := range []*sideData{b, t} {
		for k := range sd.kernels {
			if seen[k] {
				continue
			}
			seen[k] = true
			v := math.Max(stat(b.values[k], nb, nil).Mean, stat(t.values[k], nt, nil).Mean)
			ks = append(ks, kv{k, v})
		}
	}
	sort.Slice(ks, func(i, j int) bool {
		if ks[i].v != ks[j].v {
			return ks[i].v > ks[j].v
		}
		return ks[i].k < ks[j].k
	})
	for i := 0; i < len(ks) && i < TopKernels; i++ {
		one(ks[i].k)
	}
	for _, k := range []string{
		qkey("sync", "blocking sync calls", UnitCount), qkey("sync", "host blocked in syncs", UnitNs), qkey("sync", "GPU gaps opened by syncs", UnitNs),
		qkey("copy", "copies and memsets", UnitCount), qkey("copy", "copy GPU time", UnitNs), qkey("copy", "bytes copied", UnitBytes),
		qkey("launch", "launches", UnitCount), qkey("launch", "launch call time", UnitNs),
	} {
		one(k)
	}
	return out
}

func allTokens(sd *sideData) bool {
	for _, s := range sd.samples {
		if s.tokens <= 0 {
			return false
		}
	}
	return len(sd.samples) > 0
}

func perToken(sd *sideData) Stat {
	v := make([]float64, len(sd.samples))
	for i, s := range sd.samples {
		v[i] = s.wall / s.tokens
	}
	return stat(v, len(v), nil)
}

func phaseIdx(sd *sideData, p string) []int {
	idx := []int{}
	for i, s := range sd.samples {
		if s.phase == p {
			idx = append(idx, i)
		}
	}
	return idx
}

// stepNote says how steps were matched.
func stepNote(b, t *sideData) []string {
	if !b.perStep {
		return []string{fmt.Sprintf("normalised per capture: %d rank(s) on each side", len(b.samples))}
	}
	notes := []string{fmt.Sprintf("normalised per step: base %d step(s) (%s), test %d step(s) (%s), each a sample of the per-step values", len(b.samples), b.source, len(t.samples), t.source)}
	same := len(b.samples) == len(t.samples)
	if same {
		for i := range b.samples {
			if b.samples[i].rank != t.samples[i].rank || b.samples[i].step != t.samples[i].step {
				same = false
			}
		}
	}
	if same {
		notes = append(notes, "steps matched by number on every rank")
	} else {
		notes = append(notes, "step numbers differ between the captures: steps are compared as distributions, not one to one")
	}
	if b.source != t.source {
		notes = append(notes, fmt.Sprintf("steps come from different annotations: base %s, test %s", b.source, t.source))
	}
	return notes
}

func stepMean(cs []Change) float64 {
	for _, c := range cs {
		if c.Group == "step" && c.Name == "step time" {
			return c.Base.Mean
		}
	}
	return 0
}

// nodeChanges flattens both cross-views' trees, per step, and keeps the
// nodes whose time changed most: at least 1% of the base step time, and at
// least 10 µs.
func nodeChanges(b, t *crossview.Result, nb, nt int, step float64) []NodeChange {
	out := []NodeChange{}
	if b == nil || t == nil || nb == 0 || nt == 0 {
		return out
	}
	min := math.Max(0.01*step, 10e3)
	for _, view := range []string{"gpu", "cpu"} {
		bm, tm := map[string]float64{}, map[string]float64{}
		sync := map[string]bool{}
		bt, tt := b.GPU, t.GPU
		if view == "cpu" {
			bt, tt = b.CPU, t.CPU
		}
		flatten(bt.Roots, "", bm, sync, float64(nb))
		flatten(tt.Roots, "", tm, sync, float64(nt))
		var list []NodeChange
		paths := map[string]bool{}
		for p := range bm {
			paths[p] = true
		}
		for p := range tm {
			paths[p] = true
		}
		for p := range paths {
			if d := tm[p] - bm[p]; math.Abs(d) >= min {
				list = append(list, NodeChange{View: view, Path: p, Base: bm[p], Test: tm[p], Delta: d, Sync: sync[p]})
			}
		}
		sort.Slice(list, func(i, j int) bool {
			if a, c := math.Abs(list[i].Delta), math.Abs(list[j].Delta); a != c {
				return a > c
			}
			return list[i].Path < list[j].Path
		})
		if len(list) > TopNodes {
			list = list[:TopNodes]
		}
		out = append(out, list...)
	}
	return out
}

func flatten(ns []*crossview.Node, prefix string, m map[string]float64, sync map[string]bool, steps float64) {
	for _, n := range ns {
		// A node's path holds the frames collapsed into it (Via), so that
		// a chain reads the same whether or not the tree collapsed it.
		var seg []string
		for _, v := range n.Via {
			seg = append(seg, stepless(v))
		}
		seg = append(seg, stepless(n.Name))
		// The folded frames carry the node's time: each gets its own path.
		p := prefix
		for _, x := range seg {
			if p != "" {
				p += " › "
			}
			p += x
			m[p] += float64(n.Ns) / steps
		}
		if n.Sync {
			sync[p] = true
		}
		flatten(n.Children, p, m, sync, steps)
	}
}

func verdictLine(r *crossview.Result) string {
	c := r.Check
	s := c.Verdict
	if c.Label != "" {
		s = c.Label
	}
	if c.Reason != "" {
		s += ": " + c.Reason
	}
	return s
}

// matchFindings matches the findings of the two traces by rule id, base
// rank (through the pairs) and phase.
func matchFindings(base, test Side, pairs []RankPair) []FindingMatch {
	key := func(f evidence.Finding, rank int) string { return fmt.Sprintf("%s\x00%d\x00%s", f.Rule, rank, f.Phase) }
	tRank := map[int]int{}
	bOK := map[int]bool{}
	for _, p := range pairs {
		tRank[p.Test] = p.Base
		bOK[p.Base] = true
	}
	type entry struct {
		f    evidence.Finding
		rank int
	}
	var order []string
	bm, tm := map[string]entry{}, map[string]entry{}
	for _, f := range base.Bundle.Findings {
		if f.Trace != base.Name || (f.Rank >= 0 && !bOK[f.Rank]) {
			continue
		}
		k := key(f, f.Rank)
		if _, dup := bm[k]; !dup {
			bm[k] = entry{f, f.Rank}
			order = append(order, k)
		}
	}
	for _, f := range test.Bundle.Findings {
		if f.Trace != test.Name {
			continue
		}
		rank := f.Rank
		if rank >= 0 {
			r, ok := tRank[rank]
			if !ok {
				continue
			}
			rank = r
		}
		k := key(f, rank)
		if _, dup := tm[k]; !dup {
			tm[k] = entry{f, rank}
			if _, inB := bm[k]; !inB {
				order = append(order, k)
			}
		}
	}
	out := []FindingMatch{}
	for _, k := range order {
		b, inB := bm[k]
		t, inT := tm[k]
		m := FindingMatch{}
		switch {
		case inB && inT:
			bf, tf := b.f, t.f
			m = FindingMatch{Status: Persisting, Rule: bf.Rule, Rank: b.rank, Phase: bf.Phase, Base: &bf, Test: &tf, Note: findingNote(bf, tf)}
		case inB:
			bf := b.f
			m = FindingMatch{Status: Resolved, Rule: bf.Rule, Rank: b.rank, Phase: bf.Phase, Base: &bf}
		default:
			tf := t.f
			m = FindingMatch{Status: New, Rule: tf.Rule, Rank: t.rank, Phase: tf.Phase, Test: &tf}
		}
		out = append(out, m)
	}
	rankOf := map[string]int{Resolved: 0, New: 1, Persisting: 2}
	sort.SliceStable(out, func(i, j int) bool { return rankOf[out[i].Status] < rankOf[out[j].Status] })
	return out
}

func findingNote(b, t evidence.Finding) string {
	var parts []string
	if b.Severity != t.Severity {
		parts = append(parts, fmt.Sprintf("severity %s → %s", b.Severity, t.Severity))
	}
	if b.Status != t.Status {
		parts = append(parts, fmt.Sprintf("status %s → %s", b.Status, t.Status))
	}
	if bi, ti := b.ImpactText(), t.ImpactText(); b.Impact != t.Impact && bi != "" && ti != "" {
		parts = append(parts, fmt.Sprintf("impact %s → %s", bi, ti))
	}
	bs, ts := scopeString(b.Scope), scopeString(t.Scope)
	if bs != ts {
		parts = append(parts, fmt.Sprintf("fix scope %s → %s", bs, ts))
	}
	return strings.Join(parts, "; ")
}

func scopeString(s evidence.Scope) string {
	var p []string
	if len(s.Producers) > 0 {
		p = append(p, strings.Join(s.Producers, ","))
	}
	if len(s.Platforms) > 0 {
		p = append(p, strings.Join(s.Platforms, ","))
	}
	if len(s.Capture) > 0 {
		p = append(p, strings.Join(s.Capture, ","))
	}
	if len(p) == 0 {
		return "any"
	}
	return strings.Join(p, "/")
}

func sideGaps(label string, s Side) []string {
	var out []string
	for _, g := range s.Bundle.Gaps {
		if g.Trace != s.Name && g.Trace != "" {
			continue
		}
		if g.Kind == evidence.GapSingleRank {
			continue // a diff of two single-rank traces needs no reminder
		}
		rank := "all ranks"
		if g.Rank >= 0 {
			rank = fmt.Sprintf("rank %d", g.Rank)
		}
		out = append(out, fmt.Sprintf("%s (trace %s, %s): %s", label, s.Name, rank, g.What))
	}
	return out
}

var (
	digits     = rx.MustCompile(`[0-9]+`)
	otherNodes = rx.MustCompile(`^other \([0-9]+ nodes?\)$`)
)

// stepless names every step annotation of a family alike (ProfilerStep#N,
// execute_context_N(N)_generation_N(N), step[KIND bs=N]), so that the
// cross-view nodes of the steps add up and compare across captures.
func stepless(name string) string {
	if otherNodes.MatchString(name) {
		return "other (small nodes)" // the cross-view's folded small nodes: their count varies
	}
	if strings.HasPrefix(name, "ProfilerStep#") || strings.HasPrefix(name, "execute_") || strings.HasPrefix(name, "step[") {
		return digits.ReplaceAllLiteralString(name, "N")
	}
	return name
}

func serving(rs []evidence.RankInfo) bool {
	for _, r := range rs {
		if r.Serving() {
			return true
		}
	}
	return false
}

func filterString(f evidence.Filter) string {
	var p []string
	if f.Phase != "" {
		p = append(p, "phase "+f.Phase)
	}
	if f.HasStep {
		p = append(p, fmt.Sprintf("step %d", f.Step))
	}
	return strings.Join(p, ", ")
}
