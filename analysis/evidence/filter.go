// Package evidence owns the evidence Bundle: the traces' metadata, the
// filter, every evidence table with its column units, the evidence gaps and
// the findings, with a deterministic msgpack encoding. It also rolls the
// mergeable rows that the SQL presets return up for any filter.
//
// Running the presets is left to package pipeline over the engine
// (internal/duck); turning evidence into findings is analysis/findings'; the
// report is analysis/report's.
package evidence

// Filter selects a slice of the loaded traces. It is the same everywhere: a
// magic's options, the CLI's flags and the viewer's controls all fill it,
// and it reaches SQL as parameters, never pasted into the text.
type Filter struct {
	Trace string `msgpack:"trace,omitempty" json:"trace,omitempty"` // trace name; "" = all
	// Rank selects one rank when HasRank.
	Rank    int  `msgpack:"rank" json:"rank"`
	HasRank bool `msgpack:"has_rank" json:"has_rank"`
	// Window in nanoseconds relative to the trace's first timestamp; both zero = everything.
	WindowStartNs int64 `msgpack:"window_start_ns,omitempty" json:"window_start_ns,omitempty"`
	WindowEndNs   int64 `msgpack:"window_end_ns,omitempty" json:"window_end_ns,omitempty"`
	// Phase is prefill, decode or mixed; "" = all.
	Phase string `msgpack:"phase,omitempty" json:"phase,omitempty"`
	// Step selects one step when HasStep.
	Step    int  `msgpack:"step" json:"step"`
	HasStep bool `msgpack:"has_step" json:"has_step"`
	// Stream selects one GPU stream when HasStream.
	Stream    int64 `msgpack:"stream" json:"stream"`
	HasStream bool  `msgpack:"has_stream" json:"has_stream"`
}

// StepAnnotations names what a trace's steps, and so its phases, are read
// from (sql/evidence_base.sql), for the messages that say a trace has
// none: a filter's phase or step, a load's step slice, the cross-view's gap.
const StepAnnotations = "ProfilerStep#N, vLLM execute_context_…_generation_… or execute_new_…_cached_… (or execute_model frames), SGLang step[…] or Optimizer.step# annotations"
