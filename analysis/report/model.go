package report

import "github.com/tracebook/tracebook/analysis/table"

// Doc is the filled-in report: everything printMarkdown and printHTML
// render, in the order they render it. Strings in a Doc are plain text (names
// from traces included); the printers escape them. Slices are never nil once
// build has run, so a Doc encodes the same way every time.
type Doc struct {
	Title string `msgpack:"title" json:"title"`
	// Scope says which slice of which traces the report covers (the filter in words).
	Scope string `msgpack:"scope" json:"scope"`
	// Summary is the Executive Summary: a few sentences naming the most likely bottleneck.
	Summary []string `msgpack:"summary" json:"summary"`
	// Charts are drawn from the evidence of the view's filter (Charts in
	// charts.go): GPU span per rank, by kernel class, the top kernels and
	// per step. A chart without data is left out.
	Charts []Chart `msgpack:"charts" json:"charts"`
	// ChartsNote, where the capture gate finds that no timing of the
	// slice can be read (a sampled trace, a counter capture), says so
	// above the charts, which still draw the events the trace holds.
	ChartsNote string `msgpack:"charts_note,omitempty" json:"charts_note,omitempty"`

	Traces []TraceMeta `msgpack:"traces" json:"traces"`
	// Capture lists what the capture-quality gate found in the window
	// (warm-up, held work, graph capture, counter replay, ...), each with
	// its evidence; the rules judge the slice outside them.
	Capture []string `msgpack:"capture" json:"capture"`

	// GPUTree is the GPU call tree (python → operator → runtime → kernel);
	// nil when the bundle carries no cross-view.
	GPUTree *Tree `msgpack:"gpu_tree" json:"gpu_tree"`
	// NoTree says why GPUTree is nil: why the cross-view could not be
	// built (the no_crossview evidence gap), else that the bundle carries
	// none; empty with a tree.
	NoTree string `msgpack:"no_tree,omitempty" json:"no_tree,omitempty"`
	// CPUCheck is the one or two sentences of the CPU cross-check.
	CPUCheck string `msgpack:"cpu_check" json:"cpu_check"`
	// KeyFindings names what the workload is and its dominant pattern.
	KeyFindings []string `msgpack:"key_findings" json:"key_findings"`

	Critical  []Issue `msgpack:"critical" json:"critical"`     // at most MaxCritical
	FollowUps []Issue `msgpack:"follow_ups" json:"follow_ups"` // at most MaxFollowUps

	Impact     string    `msgpack:"impact" json:"impact"`
	Confirmed  []string  `msgpack:"confirmed" json:"confirmed"`
	Hypotheses []string  `msgpack:"hypotheses" json:"hypotheses"`
	Perfetto   []Inspect `msgpack:"perfetto" json:"perfetto"`
	Gaps       []string  `msgpack:"gaps" json:"gaps"`
	NextLever  string    `msgpack:"next_lever" json:"next_lever"`
	// NextLeverCmd is a command that takes the next lever's first step
	// (the kernel profiler's, on CUDA), "" for none.
	NextLeverCmd string `msgpack:"next_lever_cmd" json:"next_lever_cmd"`

	// Evidence is the Evidence section's summary, the seed's Area |
	// Evidence | Interpretation table: one row per evidence area (areas.go).
	Evidence []EvidenceRow `msgpack:"evidence" json:"evidence"`
	// Tables are the evidence tables the findings rest on, capped to MaxRows rows each.
	Tables []table.Table `msgpack:"tables" json:"tables"`
	// OneTrace is true when one trace is in scope: the tables then leave
	// out their trace column, which would repeat its name on every row.
	OneTrace bool `msgpack:"one_trace" json:"one_trace"`

	// Controls are what the interactive viewer offers; the static report shows them inert.
	Controls Controls `msgpack:"controls" json:"controls"`
}

// The caps of the report contract (docs/DESIGN.md §4).
const (
	MaxCritical  = 3
	MaxFollowUps = 2
	// MaxRows is the default number of rows an evidence table shows.
	MaxRows = 25
	// MinTreeShare folds tree nodes below this share of their parent's GPU time into "other".
	MinTreeShare = 0.01
	// MaxTreeChildren is the most children a tree node shows before the rest fold into "other".
	MaxTreeChildren = 8
	// MaxTreeDepth is the deepest tree level shown.
	MaxTreeDepth = 12
)

// TraceMeta is one line of the Trace Metadata section.
type TraceMeta struct {
	Name     string `msgpack:"name" json:"name"`
	File     string `msgpack:"file" json:"file"`
	Merged   bool   `msgpack:"merged" json:"merged"`
	Events   int64  `msgpack:"events" json:"events"`
	SpanNs   int64  `msgpack:"span_ns" json:"span_ns"`
	Ranks    []int  `msgpack:"ranks" json:"ranks"`
	Producer string `msgpack:"producer" json:"producer"`
	Device   string `msgpack:"device" json:"device"`
	// Capture lists the capture settings the trace shows (sync events, python stacks, CUDA graphs, ...).
	Capture []string `msgpack:"capture" json:"capture"`
}

// EvidenceRow is one row of the Evidence summary.
type EvidenceRow struct {
	// Area is the kind of evidence: "Synchronization waits", "Rank imbalance", ...
	Area string `msgpack:"area" json:"area"`
	// Evidence is the key number with its context: what it is a share of,
	// on which ranks. For a gap it says what the trace cannot show.
	Evidence string `msgpack:"evidence" json:"evidence"`
	// Interpretation is what the number means for this trace: the findings
	// that rest on the area, or that no rule flags it; for a gap, why the
	// trace cannot show it and how to capture it.
	Interpretation string `msgpack:"interpretation" json:"interpretation"`
	// Gap is true when the area's evidence is missing (never shown as zero).
	Gap bool `msgpack:"gap" json:"gap"`
}

// Tree is a GPU call tree: GPU time attributed to the host stack that launched it.
type Tree struct {
	// Where is the process / thread / time range the tree covers.
	Where string `msgpack:"where" json:"where"`
	Root  Node   `msgpack:"root" json:"root"`
}

// Node is one frame of a Tree.
type Node struct {
	ID     string `msgpack:"id" json:"id"` // stable path id, for folding
	Name   string `msgpack:"name" json:"name"`
	Kernel string `msgpack:"kernel,omitempty" json:"kernel,omitempty"` // leaf: the GPU op it launched
	GPUNs  int64  `msgpack:"gpu_ns" json:"gpu_ns"`
	// Share of the root's GPU time, 0..1.
	Share float64 `msgpack:"share" json:"share"`
	Sync  bool    `msgpack:"sync,omitempty" json:"sync,omitempty"`
	// Folded counts the nodes merged into this "other" node.
	Folded   int    `msgpack:"folded,omitempty" json:"folded,omitempty"`
	Children []Node `msgpack:"children" json:"children"`
}

// Issue is a 🔴 critical issue or a 🟡 follow-up.
type Issue struct {
	ID          string `msgpack:"id" json:"id"` // rule id
	Title       string `msgpack:"title" json:"title"`
	Observation string `msgpack:"observation" json:"observation"`
	Fix         string `msgpack:"fix" json:"fix"`
	// Snippet is a 1-3 line code or config change, when the fix is one.
	Snippet string `msgpack:"snippet,omitempty" json:"snippet,omitempty"`
	// Confirmed is true when a mechanism links the claim; false = hypothesis.
	Confirmed bool `msgpack:"confirmed" json:"confirmed"`
	// Evidence names the evidence tables and presets the issue rests on.
	Evidence []string `msgpack:"evidence" json:"evidence"`
	// Score ranks issues; higher first.
	Score float64 `msgpack:"score" json:"score"`
	// Window is where to check the issue in Perfetto (perfetto.go); nil
	// when the source has none for this finding.
	Window *Window `msgpack:"window,omitempty" json:"window,omitempty"`
	// Timeline is the chart of the window's timeline (timeline.go); nil
	// when the window has none.
	Timeline *Chart `msgpack:"timeline,omitempty" json:"timeline,omitempty"`
}

// Inspect is one line of the Perfetto inspection guide.
type Inspect struct {
	What    string `msgpack:"what" json:"what"`
	Process string `msgpack:"process" json:"process"`
	Thread  string `msgpack:"thread" json:"thread"`
	StartNs int64  `msgpack:"start_ns" json:"start_ns"` // relative to the trace's first timestamp
	EndNs   int64  `msgpack:"end_ns" json:"end_ns"`
}

// Controls are the viewer's inputs.
type Controls struct {
	Ranks  []int    `msgpack:"ranks" json:"ranks"`
	Phases []string `msgpack:"phases" json:"phases"`
	// Rank and Phase are the selected values (HasRank false = all ranks; Phase "" = all).
	Rank    int    `msgpack:"rank" json:"rank"`
	HasRank bool   `msgpack:"has_rank" json:"has_rank"`
	Phase   string `msgpack:"phase" json:"phase"`
	Rules   []Knob `msgpack:"rules" json:"rules"`
	// Sort is the current sort of each evidence table: table name → "col" or "-col".
	Sort map[string]string `msgpack:"sort" json:"sort"`
	// Open lists the tree node ids shown unfolded.
	Open []string `msgpack:"open" json:"open"`
}

// Knob is one rule threshold the viewer lets the reader change.
type Knob struct {
	Rule    string  `msgpack:"rule" json:"rule"`
	Name    string  `msgpack:"name" json:"name"`
	Value   float64 `msgpack:"value" json:"value"`
	Default float64 `msgpack:"default" json:"default"`
	Unit    string  `msgpack:"unit" json:"unit"`
	Doc     string  `msgpack:"doc" json:"doc"` // what it compares, and its source
}
