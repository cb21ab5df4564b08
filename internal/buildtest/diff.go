package buildtest

import (
	"testing"

	"github.com/tracebook/tracebook/analysis/crossview"
	"github.com/tracebook/tracebook/analysis/diff"
	"github.com/tracebook/tracebook/analysis/evidence"
	"github.com/tracebook/tracebook/analysis/findings"
	"github.com/tracebook/tracebook/analysis/table"
)

// Names of the sides of SampleDiffInput.
const (
	DiffBase = "vllm_llama_tp8"
	DiffTest = "vllm_llama_tp8_fixed"
)

// SampleDiffInput returns an encoded diff input (diff.EncodeInput) of two
// synthetic two-rank vLLM captures (prefill and decode steps): the test has
// other steps, and one kernel renamed to Hostile is its top kernel. Each
// side carries a cross-view of every rank and one per rank, whose frames
// include Hostile.
func SampleDiffInput(t testing.TB) []byte {
	t.Helper()
	base := SyntheticBundle(2, 12)
	test := SyntheticBundle(2, 17)
	renameTrace(test, DiffTest)
	if k := test.Tables["kernels"]; k != nil {
		ci, ct := k.Col("name"), k.Col("total_ns")
		for _, r := range k.Rows {
			if r[ci] == "void vllm::kernel_3<c10::BFloat16, 128, 64, true>(c10::BFloat16*, c10::BFloat16 const*, int)" {
				// The test's top kernel, so that the diff lists it.
				r[ci], r[ct] = Hostile, r[ct].(int64)*50
			}
		}
	}
	for _, b := range []*evidence.Bundle{base, test} {
		b.Findings = findings.Evaluate(evidence.Rollup(b, evidence.Filter{}), b.Thresholds)
	}
	in := &diff.Input{
		Base: diff.InputSide{Name: DiffBase, Bundle: base, CrossViews: sampleCrossViews(DiffBase, 12, 1)},
		Test: diff.InputSide{Name: DiffTest, Bundle: test, CrossViews: sampleCrossViews(DiffTest, 17, 2)},
	}
	data, err := diff.EncodeInput(in)
	if err != nil {
		t.Fatal(err)
	}
	return data
}

// renameTrace sets the trace column of every table of b to name.
func renameTrace(b *evidence.Bundle, name string) {
	all := []*table.Table{b.Traces}
	for _, t := range b.Tables {
		all = append(all, t)
	}
	for _, t := range all {
		if ci := t.Col("trace"); ci >= 0 {
			for _, r := range t.Rows {
				r[ci] = name
			}
		}
	}
}

// sampleCrossViews returns a cross-view of every rank of trace, then one
// per rank (0 and 1); scale grows the sync node.
func sampleCrossViews(trace string, steps int, scale int64) []*crossview.Result {
	one := func(s crossview.Slice, ranks int64) *crossview.Result {
		per := int64(steps) * ranks
		return &crossview.Result{Label: "trace " + trace, Slice: s,
			GPU: crossview.Tree{View: "gpu", TotalNs: 20_000_000 * per, Roots: []*crossview.Node{
				{Name: "execute_context_1(1024)_generation_31(31)", Kind: "annotation", Ns: 20_000_000 * per, Children: []*crossview.Node{
					{Name: "aten::" + Hostile, Kind: "cpu_op", Ns: 15_000_000 * per, Children: []*crossview.Node{
						{Name: Hostile, Kind: "kernel", Ns: 15_000_000 * per}}},
					{Name: "cudaStreamSynchronize", Kind: "runtime", Sync: true, Ns: 2_000_000 * scale * per},
				}}}},
			CPU: crossview.Tree{View: "cpu", TotalNs: 25_000_000 * per, Roots: []*crossview.Node{
				{Name: "execute_context_1(1024)_generation_31(31)", Kind: "annotation", Ns: 25_000_000 * per}}},
			Check: crossview.Check{Verdict: "gpu-bound", Label: "confirmed", Metrics: crossview.Metrics{Ranks: int(ranks)}},
			Gaps:  []string{},
		}
	}
	return []*crossview.Result{
		one(crossview.Slice{Trace: trace}, 2),
		one(crossview.Slice{Trace: trace, Rank: 0, HasRank: true}, 1),
		one(crossview.Slice{Trace: trace, Rank: 1, HasRank: true}, 1),
	}
}
