package evidence

import (
	"sort"
	"strings"

	"github.com/tracebook/tracebook/analysis/table"
)

// SchemaVersion is the version of the Bundle's layout. It changes when a
// field changes meaning or a reader of an older bundle would misread it.
const SchemaVersion = 1

// Areas lists the evidence areas in the order `%evidence all` collects and a
// report shows them. Each is one preset, sql/<area>.sql; "phases" is another
// name for "steps".
var Areas = []string{"overview", "sync", "kernels", "ops", "ranks", "memcpy", "steps", "gaps", "launch", "overlap", "graphs", "memory", "capture", "workload", "collectives"}

// AreaPreset maps an area name as a user types it to its preset's name:
// "phases" is the steps preset; other names map to themselves.
func AreaPreset(area string) string {
	if area == "phases" {
		return "steps"
	}
	return area
}

// Bundle is everything the report and the offline viewer need: the loaded
// traces' metadata, the filter the evidence was collected under, the
// mergeable rows of every area, what the traces cannot show, the findings
// and the user's %context. It is encoded with msgpack (see Encode).
type Bundle struct {
	SchemaVersion int `msgpack:"schema_version" json:"schema_version"`
	// Traces holds the rows of the traces table (one per trace, file and rank).
	Traces *table.Table `msgpack:"traces" json:"traces"`
	// Filter is the filter the SQL ran under (trace, rank and window are
	// applied in SQL; step, phase and stream by Rollup).
	Filter Filter `msgpack:"filter" json:"filter"`
	// Tables maps an area to its preset's rows, with units from the header.
	Tables Tables `msgpack:"tables" json:"tables"`
	// Gaps lists what the traces cannot show, and why.
	Gaps []Gap `msgpack:"gaps" json:"gaps"`
	// Findings are the rules' conclusions for Filter, most important first.
	Findings []Finding `msgpack:"findings" json:"findings"`
	// Context holds the %context values (tp, max-num-seqs, ...).
	Context map[string]string `msgpack:"context" json:"context"`
	// Thresholds are the rule thresholds the findings were computed with
	// (name -> value); empty means the defaults.
	Thresholds Thresholds `msgpack:"thresholds" json:"thresholds"`
}

// NewBundle returns an empty bundle of the current schema version.
func NewBundle() *Bundle {
	return &Bundle{
		SchemaVersion: SchemaVersion,
		Tables:        Tables{},
		Context:       map[string]string{},
		Thresholds:    Thresholds{},
	}
}

// Table returns the rows of an area, or nil.
func (b *Bundle) Table(area string) *table.Table {
	if b == nil || b.Tables == nil {
		return nil
	}
	return b.Tables[AreaPreset(area)]
}

// AddGap records an evidence gap once: a gap equal to one already recorded
// is dropped. Gaps stay sorted by kind, trace and rank.
func (b *Bundle) AddGap(g Gap) {
	for _, h := range b.Gaps {
		if h == g {
			return
		}
	}
	b.Gaps = append(b.Gaps, g)
	sort.SliceStable(b.Gaps, func(i, j int) bool {
		x, y := b.Gaps[i], b.Gaps[j]
		if x.Kind != y.Kind {
			return x.Kind < y.Kind
		}
		if x.Trace != y.Trace {
			return x.Trace < y.Trace
		}
		return x.Rank < y.Rank
	})
}

// GapKind names a kind of missing evidence.
type GapKind string

// The kinds of evidence gap.
const (
	GapNoSyncEvents     GapKind = "no_sync_events"      // no cuda_sync events: GPU-side waits are invisible
	GapNoPythonStacks   GapKind = "no_python_stacks"    // no python_function events: no python frames
	GapGraphsHideKernel GapKind = "graphs_hide_kernels" // CUDA graphs: replayed kernels have no CPU operator
	GapGraphUnderRecord GapKind = "graph_under_recording"
	GapGPURecordsLost   GapKind = "gpu_records_lost" // CUPTI stopped early: GPU activity records are missing
	GapSingleRank       GapKind = "single_rank"      // one rank only: no imbalance or straggler evidence
	GapRankDefaulted    GapKind = "rank_defaulted"   // the rank was not found in the trace and defaulted to 0
	GapNoSteps          GapKind = "no_steps"         // no ProfilerStep# and no execute_*/step[ annotations
	GapStepsHypothesis  GapKind = "steps_hypothesis" // steps or phases inferred, not annotated
	GapNoGPUEvents      GapKind = "no_gpu_events"    // no kernels: a CPU-only or counter-only trace
	GapNoMemoryEvents   GapKind = "no_memory_events" // no [memory] events (profile_memory off)
	GapMemoryKindHidden GapKind = "memory_kind_hidden"
	GapNoDeviceName     GapKind = "no_device_name" // deviceProperties do not name the GPU
)

// Gap is one piece of evidence a trace cannot show.
type Gap struct {
	Kind  GapKind `msgpack:"kind" json:"kind"`
	Trace string  `msgpack:"trace" json:"trace"`
	Rank  int     `msgpack:"rank" json:"rank"` // -1: every rank of the trace
	What  string  `msgpack:"what" json:"what"` // what cannot be shown
	Why   string  `msgpack:"why" json:"why"`   // why, and how to capture it
}

// Finding is one conclusion of a rule (analysis/findings) with the numbers,
// their context, the fix and what it rests on.
type Finding struct {
	Rule     string `msgpack:"rule" json:"rule"`         // rule id, e.g. sync_bound_loop
	Severity string `msgpack:"severity" json:"severity"` // critical or minor
	Status   string `msgpack:"status" json:"status"`     // confirmed or hypothesis
	Title    string `msgpack:"title" json:"title"`       // a conclusion, not a metric
	// Observation gives the numbers with what they are a share of and where
	// (trace, rank, window, phase).
	Observation string `msgpack:"observation" json:"observation"`
	// Mechanism says what links cause and effect; empty for a hypothesis
	// that rests on correlation only.
	Mechanism string `msgpack:"mechanism,omitempty" json:"mechanism,omitempty"`
	Fix       string `msgpack:"fix" json:"fix"`
	Snippet   string `msgpack:"snippet,omitempty" json:"snippet,omitempty"` // one line, where the fix is one
	Verify    string `msgpack:"verify,omitempty" json:"verify,omitempty"`   // how to check the fix worked
	Refute    string `msgpack:"refute" json:"refute"`                       // what would refute the finding
	// Caveat says why the finding's confidence or severity was capped by
	// the capture-quality gate (analysis/findings/capture.go); empty when
	// nothing in the capture limits it.
	Caveat string `msgpack:"caveat,omitempty" json:"caveat,omitempty"`
	// Evidence lists the preset rows the finding rests on.
	Evidence []Ref `msgpack:"evidence" json:"evidence"`
	Scope    Scope `msgpack:"scope" json:"scope"`
	// Where: the trace, rank (-1 all), step (-1 all) and phase ("" all).
	Trace string `msgpack:"trace" json:"trace"`
	Rank  int    `msgpack:"rank" json:"rank"`
	Step  int    `msgpack:"step" json:"step"`
	Phase string `msgpack:"phase,omitempty" json:"phase,omitempty"`
	// Impact is the share (0..1) of ImpactOf the finding accounts for;
	// findings are ranked by it.
	Impact float64 `msgpack:"impact" json:"impact"`
	// ImpactOf says what Impact is a share of, with its trace, rank and
	// window: "the GPU span (trace t, rank 3, whole trace)". Empty when
	// Impact only orders the finding among the others and is no share of a
	// measured time.
	ImpactOf string `msgpack:"impact_of,omitempty" json:"impact_of,omitempty"`
	// FixReach is the share of ImpactOf that the fix offered reaches,
	// where the fix says it reaches less than the finding accounts for
	// (a graph replay of the compiled regions, not the eager code beside
	// them); 0 when it does not say. FixReachOf names that time.
	FixReach   float64 `msgpack:"fix_reach,omitempty" json:"fix_reach,omitempty"`
	FixReachOf string  `msgpack:"fix_reach_of,omitempty" json:"fix_reach_of,omitempty"`
	// Beyond states, with its base, what the fix offered also removes
	// besides the time the finding accounts for (a DataLoader fix that also
	// runs the model fewer times); empty otherwise. Expected Impact says it
	// after the finding's share.
	Beyond string `msgpack:"beyond,omitempty" json:"beyond,omitempty"`
	// Wait, on an exposed-communication finding whose matched collectives
	// are mostly waiting for late ranks, states that wait with its base:
	// "of rank 1's 11.3 ms of matched collective time, 11.1 ms (98.1%) was
	// waiting for late ranks to arrive and 0.211 ms transfer". Empty otherwise.
	Wait string `msgpack:"wait,omitempty" json:"wait,omitempty"`
}

// ImpactText states the impact with what it is a share of: "59.4% of the
// GPU span (trace t, rank 1, whole trace)"; "" when Impact only orders the
// finding (ImpactOf is empty).
func (f Finding) ImpactText() string {
	if f.ImpactOf == "" {
		return ""
	}
	return table.Pct(min(f.Impact, 1)) + " of " + f.ImpactOf
}

// Ref points at evidence: a preset and the values of the key columns that
// select its rows.
type Ref struct {
	Preset string            `msgpack:"preset" json:"preset"`
	Where  map[string]string `msgpack:"where,omitempty" json:"where,omitempty"`
	Note   string            `msgpack:"note,omitempty" json:"note,omitempty"`
}

// String is the reference as reports print it: the preset, then its row
// keys in name order ("gaps [category=host_wait, rank=0]").
func (r Ref) String() string {
	if len(r.Where) == 0 {
		return r.Preset
	}
	keys := make([]string, 0, len(r.Where))
	for k := range r.Where {
		keys = append(keys, k)
	}
	sort.Strings(keys)
	kv := make([]string, len(keys))
	for i, k := range keys {
		kv[i] = k + "=" + r.Where[k]
	}
	return r.Preset + " [" + strings.Join(kv, ", ") + "]"
}

// Scope says where a finding's fix applies: producers (profiler_step, vllm,
// sglang), platforms (cuda, rocm) and the capture settings it needs. Empty
// lists mean any.
type Scope struct {
	Producers []string `msgpack:"producers,omitempty" json:"producers,omitempty"`
	Platforms []string `msgpack:"platforms,omitempty" json:"platforms,omitempty"`
	Capture   []string `msgpack:"capture,omitempty" json:"capture,omitempty"`
}
