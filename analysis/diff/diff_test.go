package diff

import (
	"math"
	"strings"
	"testing"

	"github.com/tracebook/tracebook/analysis/evidence"
	"github.com/tracebook/tracebook/analysis/table"
)

func TestDiffChangeVerdict(t *testing.T) {
	tests := []struct {
		name    string
		b, t    Stat
		verdict string
		tval    float64
	}{
		{"same", Stat{5, 10, 1}, Stat{5, 10, 1}, NoChange, 0},
		{"one step", Stat{1, 10, 0}, Stat{5, 8, 1}, Unknown, 0},
		{"no variation", Stat{3, 10, 0}, Stat{3, 8, 0}, Significant, 0},
		// sp = 1, se = sqrt(2/4) = 0.7071: t = -2 / 0.7071
		{"significant", Stat{4, 10, 1}, Stat{4, 8, 1}, Significant, -2 / math.Sqrt(0.5)},
		{"within noise", Stat{4, 10, 1}, Stat{4, 9.5, 1}, WithinNoise, -0.5 / math.Sqrt(0.5)},
		{"no such step in base", Stat{}, Stat{3, 2.4, 0.1}, Missing, 0},
		{"no such step in test", Stat{1, 26, 0}, Stat{}, Missing, 0},
	}
	for _, tc := range tests {
		t.Run(tc.name, func(t *testing.T) {
			c := change("step", "step time", UnitNs, tc.b, tc.t)
			if c.Verdict != tc.verdict || math.Abs(c.T-tc.tval) > 1e-9 {
				t.Errorf("change(%+v, %+v) = %s t %.3f, want %s t %.3f", tc.b, tc.t, c.Verdict, c.T, tc.verdict, tc.tval)
			}
			// A side without a sample is a gap: no delta, no zero shown.
			if missing := tc.verdict == Missing; missing != (delta(c) == "—") || missing && c.Delta != 0 {
				t.Errorf("change(%+v, %+v): delta %q (%v)", tc.b, tc.t, delta(c), c.Delta)
			}
		})
	}
}

func TestDiffStat(t *testing.T) {
	s := stat([]float64{1, 2, 3, 4}, 4, nil)
	if s.N != 4 || s.Mean != 2.5 || math.Abs(s.Std-math.Sqrt(5.0/3)) > 1e-12 {
		t.Errorf("stat = %+v", s)
	}
	if s := stat(nil, 3, nil); s.N != 3 || s.Mean != 0 {
		t.Errorf("stat(nil) = %+v, want 3 zero samples", s)
	}
}

// bundle builds a one-rank bundle of a trace with the given step walls (ns)
// and traces-table metadata.
func bundle(name, gpu string, walls ...int64) *evidence.Bundle {
	b := evidence.NewBundle()
	b.Traces = &table.Table{Name: "traces", Columns: []table.Column{{Name: "trace"}, {Name: "rank"}, {Name: "gpu_model"}, {Name: "producer"}, {Name: "platform"}},
		Rows: [][]any{{name, int64(0), gpu, "profiler_step", "cuda"}}}
	st := &table.Table{Name: "steps", Columns: []table.Column{{Name: "trace"}, {Name: "rank"}, {Name: "step"}, {Name: "phase"}, {Name: "source"}, {Name: "wall_ns"}}}
	for i, w := range walls {
		st.Rows = append(st.Rows, []any{name, int64(0), int64(i), "train", "profiler_step", w})
	}
	b.Tables["steps"] = st
	return b
}

func TestDiffCompareHostile(t *testing.T) {
	base := Side{Name: "<b>base</b>", Bundle: bundle("<b>base</b>", "A100<script>", 10e6, 11e6, 12e6)}
	test := Side{Name: "test|x", Bundle: bundle("test|x", "V100", 8e6, 8e6, 9e6)}
	d, err := Compare(base, test, evidence.Filter{})
	if err != nil {
		t.Fatal(err)
	}
	if len(d.Mismatches) != 1 || d.Mismatches[0].What != "GPU model" {
		t.Fatalf("mismatches = %+v", d.Mismatches)
	}
	var md, html strings.Builder
	if err := Write(&md, d, Markdown); err != nil {
		t.Fatal(err)
	}
	if err := Write(&html, d, HTMLFragment); err != nil {
		t.Fatal(err)
	}
	if strings.Contains(html.String(), "<script") || strings.Contains(html.String(), "<b>base") {
		t.Errorf("HTML is not escaped:\n%s", html.String())
	}
	if !strings.Contains(strings.SplitN(md.String(), "\n", 4)[2], "DIFFERENT CONTEXTS") {
		t.Errorf("the warning is not at the top:\n%s", md.String())
	}
	if !strings.Contains(md.String(), "test\\|x") {
		t.Errorf("Markdown does not escape |:\n%s", md.String())
	}
	st := d.Changes[0]
	if st.Name != "step time" || st.Base.Mean != 11e6 || math.Abs(st.Delta-(25e6/3-11e6)) > 1 || st.Verdict != Significant {
		t.Errorf("step time change = %+v", st)
	}
	if _, err := Compare(base, test, evidence.Filter{Phase: "decode"}); err == nil || err.Error() != "diff: no step of <b>base</b> passes the filter (phase decode)" {
		t.Errorf("Compare(phase decode) err = %v", err)
	}
	if _, err := Compare(base, Side{Name: "none", Bundle: evidence.NewBundle()}, evidence.Filter{}); err == nil || !strings.Contains(err.Error(), "no rank to compare") {
		t.Errorf("Compare with no ranks: err = %v", err)
	}
}

func TestDiffWriteUnknownFormat(t *testing.T) {
	if err := Write(&strings.Builder{}, &Diff{}, Format(9)); err == nil || err.Error() != "unexpected output format 9" {
		t.Errorf("Write(9) = %v", err)
	}
}

// TestDiffKernelRowsDistinct: two kernels whose names differ only past the
// middle (one template argument) read apart in both renderings.
func TestDiffKernelRowsDistinct(t *testing.T) {
	name := func(n string) string {
		return "void split_embedding_backward_codegen_rowwise_adagrad_unweighted_kernel_cta_per_row_1<float, float, float, long, " + n +
			">(at::GenericPackedTensorAccessor<float, 1ul, at::RestrictPtrTraits, long>, float, float, long)"
	}
	d := &Diff{Changes: []Change{
		{Group: "kernel", Name: name("5ul"), Unit: "ns", Verdict: Significant},
		{Group: "kernel", Name: name("2ul"), Unit: "ns", Verdict: Significant},
	}}
	var md, html strings.Builder
	if err := Write(&md, d, Markdown); err != nil {
		t.Fatal(err)
	}
	if err := Write(&html, d, HTMLFragment); err != nil {
		t.Fatal(err)
	}
	for _, n := range []string{"5ul", "2ul"} {
		if !strings.Contains(md.String(), n+">`") {
			t.Errorf("Markdown: the %s kernel is not named apart:\n%s", n, md.String())
		}
		if !strings.Contains(html.String(), n+"&gt;</code>") {
			t.Errorf("HTML: the %s kernel is not named apart:\n%s", n, html.String())
		}
	}
}

// TestFindingLineRanks: a test finding of a rank paired with a base rank of
// another number names both.
func TestFindingLineRanks(t *testing.T) {
	tf := evidence.Finding{Rule: "fp32_no_tensor_cores", Rank: 1, Title: "fp32", Severity: "minor", Status: "confirmed"}
	for _, c := range []struct {
		m    FindingMatch
		want string
	}{
		{FindingMatch{Status: New, Rule: tf.Rule, Rank: 3, Test: &tf}, "[base rank 3, test rank 1]"},
		{FindingMatch{Status: Resolved, Rule: tf.Rule, Rank: 3, Base: &tf}, "[rank 3]"},
		{FindingMatch{Status: New, Rule: tf.Rule, Rank: 1, Test: &tf}, "[rank 1]"},
		{FindingMatch{Status: New, Rule: tf.Rule, Rank: -1, Test: &tf}, "[all ranks]"},
	} {
		if got := findingLine(c.m); !strings.Contains(got, c.want) {
			t.Errorf("%+v: %q, want %q in it", c.m, got, c.want)
		}
	}
}
