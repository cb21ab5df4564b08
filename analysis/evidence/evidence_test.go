package evidence_test

import (
	"bytes"
	"fmt"
	"path/filepath"
	"reflect"
	"strings"
	"testing"

	"github.com/tracebook/tracebook/analysis/evidence"
	"github.com/tracebook/tracebook/analysis/table"
	"github.com/tracebook/tracebook/internal/testutil"
)

func col(name, typ, unit string) table.Column { return table.Column{Name: name, Type: typ, Unit: unit} }

// sampleBundle is a small bundle with two ranks, two steps and every kind of cell.
func sampleBundle() *evidence.Bundle {
	b := evidence.NewBundle()
	b.Traces = &table.Table{Name: "traces", Columns: []table.Column{
		col("trace", "VARCHAR", "TEXT"), col("rank", "INTEGER", "INT"), col("rank_source", "VARCHAR", "TEXT"),
		col("producer", "VARCHAR", "TEXT"), col("platform", "VARCHAR", "TEXT"), col("gpu_model", "VARCHAR", "TEXT"),
		col("gpu_total_mem", "BIGINT", "BYTES"), col("has_graphs", "BOOLEAN", "BOOL"), col("has_sync_events", "BOOLEAN", "BOOL"),
		col("has_python_stacks", "BOOLEAN", "BOOL"),
	}, Rows: [][]any{
		{"job", int64(0), "filename", "profiler_step", "cuda", "NVIDIA H100 80GB HBM3", int64(85018279936), false, false, true},
		{"job", int64(1), "filename", "profiler_step", "cuda", nil, int64(85018279936), false, false, true},
	}, Total: 2}
	b.Filter = evidence.Filter{Trace: "job"}
	b.Tables["kernels"] = &table.Table{Name: "kernels", Columns: []table.Column{
		col("trace", "VARCHAR", "TEXT"), col("rank", "INTEGER", "INT"), col("step", "INTEGER", "INT"), col("phase", "VARCHAR", "TEXT"),
		col("stream", "BIGINT", "INT"), col("name", "VARCHAR", "TEXT"), col("class", "VARCHAR", "TEXT"), col("count", "BIGINT", "COUNT"),
		col("total_ns", "BIGINT", "DURATION_NS"), col("min_ns", "BIGINT", "DURATION_NS"), col("max_ns", "BIGINT", "DURATION_NS"),
		col("hist", "VARCHAR", "HIST"),
	}, Rows: [][]any{
		{"job", int64(0), int64(1), "train", int64(7), "gemm", "COMP", int64(2), int64(3000), int64(1000), int64(2000), "79:1 87:1"},
		{"job", int64(0), int64(2), "train", int64(7), "gemm", "COMP", int64(1), int64(4000), int64(4000), int64(4000), "95:1"},
		{"job", int64(0), int64(2), "train", int64(9), "ncclDevKernel_AllReduce", "COMM", int64(1), int64(500000), int64(500000), int64(500000), "151:1"},
		{"job", int64(1), int64(1), "train", int64(7), "gemm", "COMP", int64(1), int64(-5), int64(-5), int64(-5), ""},
	}, Total: 4}
	b.Tables["ranks"] = &table.Table{Name: "ranks", Columns: []table.Column{
		col("trace", "VARCHAR", "TEXT"), col("rank", "INTEGER", "INT"), col("step", "INTEGER", "INT"), col("phase", "VARCHAR", "TEXT"),
		col("first_ns", "BIGINT", "TIMESTAMP_NS"), col("last_ns", "BIGINT", "TIMESTAMP_NS"), col("busy_ns", "BIGINT", "DURATION_NS"),
		col("idle_ns", "BIGINT", "DURATION_NS"), col("step_ns", "BIGINT", "DURATION_NS"),
	}, Rows: [][]any{
		{"job", int64(0), int64(1), "train", int64(100), int64(5000), int64(3000), int64(1900), int64(6000)},
		{"job", int64(0), int64(2), "train", int64(5000), int64(600000), int64(504000), int64(91000), int64(600000)},
		{"job", int64(1), int64(-1), "", nil, nil, int64(0), int64(0), int64(0)},
	}, Total: 3}
	b.Tables["gaps"] = &table.Table{Name: "gaps", Columns: []table.Column{
		col("trace", "VARCHAR", "TEXT"), col("rank", "INTEGER", "INT"), col("step", "INTEGER", "INT"), col("phase", "VARCHAR", "TEXT"),
		col("stream", "BIGINT", "INT"), col("category", "VARCHAR", "TEXT"), col("count", "BIGINT", "COUNT"),
		col("idle_ns", "BIGINT", "DURATION_NS"), col("max_ns", "BIGINT", "DURATION_NS"), col("max_at_ns", "BIGINT", "TIMESTAMP_NS"),
		col("hist", "VARCHAR", "HIST"),
	}, Rows: [][]any{
		{"job", int64(0), int64(1), "train", int64(7), "host_wait", int64(2), int64(1900), int64(1500), int64(3100), "84:1 84:1"},
		{"job", int64(0), int64(2), "train", int64(7), "host_wait", int64(1), int64(91000), int64(91000), int64(8000), "131:1"},
	}, Total: 2}
	b.AddGap(evidence.Gap{Kind: evidence.GapNoSyncEvents, Trace: "job", Rank: -1, What: "w", Why: "y"})
	b.Findings = []evidence.Finding{{Rule: "r", Severity: "minor", Status: "hypothesis", Title: "t", Observation: "o",
		Fix: "f", Refute: "x", Evidence: []evidence.Ref{{Preset: "kernels", Where: map[string]string{"rank": "0", "name": "gemm"}}},
		Trace: "job", Rank: 0, Step: -1, Impact: 0.25}}
	b.Context = map[string]string{"tp": "4", "batch": "32"}
	b.Thresholds = evidence.Thresholds{"sync_share": 0.05, "a": 1}
	return b
}

func TestCodecRoundTripIsByteIdentical(t *testing.T) {
	b := sampleBundle()
	enc, err := evidence.Encode(b)
	if err != nil {
		t.Fatal(err)
	}
	dec, err := evidence.Decode(enc)
	if err != nil {
		t.Fatal(err)
	}
	again, err := evidence.Encode(dec)
	if err != nil {
		t.Fatal(err)
	}
	if !bytes.Equal(enc, again) {
		t.Fatal("encode -> decode -> encode is not byte-identical")
	}
	if !reflect.DeepEqual(dec.Tables["kernels"].Rows, b.Tables["kernels"].Rows) {
		t.Errorf("rows changed type or value:\n got %#v\nwant %#v", dec.Tables["kernels"].Rows, b.Tables["kernels"].Rows)
	}
	// Map order must not matter: a second bundle built in another order encodes the same.
	b2 := sampleBundle()
	b2.Context = map[string]string{"batch": "32", "tp": "4"}
	enc2, _ := evidence.Encode(b2)
	if !bytes.Equal(enc, enc2) {
		t.Error("encoding depends on map insertion order")
	}
	testutil.Golden(t, filepath.Join("testdata", "bundle.msgpack.golden"), enc)
}

func TestDecodeRejectsNewerSchema(t *testing.T) {
	b := sampleBundle()
	b.SchemaVersion = evidence.SchemaVersion + 1
	enc, _ := evidence.Encode(b)
	if _, err := evidence.Decode(enc); err == nil {
		t.Error("Decode accepted a newer schema version")
	}
}

func TestRollupMergesSteps(t *testing.T) {
	b := sampleBundle()
	ev := evidence.Rollup(b, evidence.Filter{})
	k := ev.Table("kernels")
	if len(k.Rows) != 3 {
		t.Fatalf("kernels rows = %d, want 3: %v", len(k.Rows), k.Rows)
	}
	// rank 0 first, sorted by total_ns descending: the all-reduce, then gemm.
	if evidence.Str(k, 0, "name") != "ncclDevKernel_AllReduce" || evidence.Str(k, 1, "name") != "gemm" {
		t.Errorf("order = %v", k.Rows)
	}
	if got := evidence.Int(k, 1, "count"); got != 3 {
		t.Errorf("gemm count = %d, want 3", got)
	}
	if got := evidence.Int(k, 1, "total_ns"); got != 7000 {
		t.Errorf("gemm total = %d, want 7000", got)
	}
	if got := evidence.Int(k, 1, "min_ns"); got != 1000 {
		t.Errorf("gemm min = %d", got)
	}
	if got := evidence.Str(k, 1, "hist"); got != "79:1 87:1 95:1" {
		t.Errorf("gemm hist = %q", got)
	}
	if got := evidence.Int(k, 1, "p50_ns"); got < 1800 || got > 2200 {
		t.Errorf("gemm p50 = %d, want about 2000", got)
	}
	// share of rank 0's busy time: 7000 / 507000.
	if got := evidence.Float(k, 1, "share_pct"); got != 1.38 {
		t.Errorf("gemm share = %v, want 1.38", got)
	}
	r := ev.Table("ranks")
	if evidence.Int(r, 0, "busy_ns") != 507000 || evidence.Int(r, 0, "idle_ns") != 92900 || evidence.Int(r, 0, "steps") != 2 {
		t.Errorf("ranks row 0 = %v", r.Rows[0])
	}
	if evidence.Int(r, 0, "first_ns") != 100 || evidence.Int(r, 0, "last_ns") != 600000 {
		t.Errorf("ranks span = %v", r.Rows[0])
	}
	g := ev.Table("gaps")
	if evidence.Int(g, 0, "max_ns") != 91000 || evidence.Int(g, 0, "max_at_ns") != 8000 || evidence.Int(g, 0, "count") != 3 {
		t.Errorf("gaps = %v", g.Rows)
	}
}

func TestRollupFilter(t *testing.T) {
	b := sampleBundle()
	ev := evidence.Rollup(b, evidence.Filter{Rank: 0, HasRank: true, Step: 2, HasStep: true, Stream: 7, HasStream: true})
	k := ev.Table("kernels")
	if len(k.Rows) != 1 || evidence.Int(k, 0, "total_ns") != 4000 {
		t.Fatalf("filtered kernels = %v", k.Rows)
	}
	r := ev.Table("ranks") // no stream column: the stream part of the filter does not apply
	if len(r.Rows) != 1 || evidence.Int(r, 0, "busy_ns") != 504000 {
		t.Fatalf("filtered ranks = %v", r.Rows)
	}
	ev = evidence.Rollup(b, evidence.Filter{Phase: "decode"})
	if n := len(ev.Table("kernels").Rows); n != 0 {
		t.Errorf("phase decode kept %d kernel rows", n)
	}
}

func TestHistQuantile(t *testing.T) {
	h := evidence.Hist{}
	for _, ns := range []int64{1000, 2000, 3000, 4000, 100000} {
		h[evidence.BucketOf(ns)]++
	}
	if got := h.Quantile(0.5, 1000, 100000); got < 2750 || got > 3250 {
		t.Errorf("p50 = %d, want within 9%% of 3000", got)
	}
	if got := h.Quantile(0.99, 1000, 100000); got < 91000 || got > 100000 {
		t.Errorf("p99 = %d", got)
	}
	if s := evidence.ParseHist(h.String()).String(); s != h.String() {
		t.Errorf("text form does not round-trip: %q vs %q", s, h.String())
	}
	if (evidence.Hist{}).Quantile(0.5, 0, 0) != 0 {
		t.Error("empty histogram quantile is not 0")
	}
}

func TestDetectGaps(t *testing.T) {
	b := sampleBundle()
	b.Gaps = nil
	b.Tables["steps"] = &table.Table{Columns: []table.Column{col("trace", "VARCHAR", "TEXT"), col("rank", "INTEGER", "INT"), col("hypothesis", "BOOLEAN", "BOOL")},
		Rows: [][]any{{"job", int64(0), false}}}
	evidence.DetectGaps(b)
	got := map[string]bool{}
	for _, g := range b.Gaps {
		got[string(g.Kind)+"/"+g.Trace+"/"+itoa(g.Rank)] = true
	}
	for _, want := range []string{"no_sync_events/job/-1", "no_steps/job/1", "no_device_name/job/1"} {
		if !got[want] {
			t.Errorf("missing gap %s in %v", want, got)
		}
	}
	for _, not := range []string{"single_rank/job/-1", "no_python_stacks/job/-1", "no_steps/job/0"} {
		if got[not] {
			t.Errorf("unexpected gap %s", not)
		}
	}
}

func itoa(i int) string {
	if i < 0 {
		return "-" + itoa(-i)
	}
	if i < 10 {
		return string(rune('0' + i))
	}
	return itoa(i/10) + string(rune('0'+i%10))
}

func TestWithoutHists(t *testing.T) {
	in := &table.Table{Name: "kernels", Total: 2,
		Columns: []table.Column{{Name: "name"}, {Name: "hist", Unit: evidence.HistUnit}, {Name: "p50_ns", Unit: "DURATION_NS"}},
		Rows:    [][]any{{"a", "95:1 96:3", int64(7)}, {"b", "90:2", int64(3)}}}
	got := evidence.WithoutHists(in)
	if fmt.Sprint(got.Columns) != fmt.Sprint([]table.Column{{Name: "name"}, {Name: "p50_ns", Unit: "DURATION_NS"}}) ||
		fmt.Sprint(got.Rows) != "[[a 7] [b 3]]" || got.Name != "kernels" || got.Total != 2 {
		t.Errorf("WithoutHists = %+v", got)
	}
	if len(in.Columns) != 3 || len(in.Rows[0]) != 3 {
		t.Errorf("WithoutHists changed its input: %+v", in)
	}
	if plain := (&table.Table{Columns: []table.Column{{Name: "x"}}}); evidence.WithoutHists(plain) != plain {
		t.Error("a table without histograms is not returned as it is")
	}
}

// A rank without kernels whose capture area found CUPTI counter ranges is a
// counter capture, not a CPU-only one: its gap says so.
func TestNoKernelsGapNamesCounterCapture(t *testing.T) {
	for _, c := range []struct {
		name     string
		counters bool
		want     string
	}{
		{"counter capture", true, "a CUPTI counter capture (cuda_profiler_range events)"},
		{"cpu only", false, "a CPU-only capture"},
	} {
		t.Run(c.name, func(t *testing.T) {
			b := sampleBundle()
			b.Gaps = nil
			b.Tables["overview"] = &table.Table{Columns: []table.Column{col("trace", "VARCHAR", "TEXT"), col("rank", "INTEGER", "INT"), col("kernels", "BIGINT", "COUNT")},
				Rows: [][]any{{"job", int64(0), int64(0)}, {"job", int64(1), int64(0)}}}
			capture := &table.Table{Columns: []table.Column{col("trace", "VARCHAR", "TEXT"), col("rank", "INTEGER", "INT"), col("kind", "VARCHAR", "TEXT")}}
			if c.counters {
				capture.Rows = [][]any{{"job", int64(0), "counter_range"}, {"job", int64(1), "counter_range"}}
			}
			b.Tables["capture"] = capture
			evidence.DetectGaps(b)
			found := false
			for _, g := range b.Gaps {
				if g.Kind == evidence.GapNoGPUEvents {
					found = true
					if !strings.Contains(g.Why, c.want) {
						t.Errorf("gap %q, want %q", g.Why, c.want)
					}
				}
			}
			if !found {
				t.Errorf("no %s gap: %+v", evidence.GapNoGPUEvents, b.Gaps)
			}
		})
	}
}

// ROCm names a host copy's memory "Host" (Memcpy HtoD (Host -> Device)):
// pageable or pinned is unknown there, as where the name gives no kinds;
// CUDA's Pageable and Pinned say.
func TestMemoryKindHiddenGap(t *testing.T) {
	for _, c := range []struct {
		src, dst string
		hidden   bool
	}{{"Host", "Device", true}, {"Device", "Host", true}, {"", "", true}, {"Pageable", "Device", false}, {"Device", "Pinned", false}} {
		b := sampleBundle()
		b.Gaps = nil
		b.Tables["memcpy"] = &table.Table{Columns: []table.Column{col("trace", "VARCHAR", "TEXT"), col("rank", "INTEGER", "INT"),
			col("kind", "VARCHAR", "TEXT"), col("src", "VARCHAR", "TEXT"), col("dst", "VARCHAR", "TEXT")},
			Rows: [][]any{{"job", int64(0), "memcpy", c.src, c.dst}}}
		evidence.DetectGaps(b)
		got := false
		for _, g := range b.Gaps {
			got = got || g.Kind == evidence.GapMemoryKindHidden
		}
		if got != c.hidden {
			t.Errorf("%s -> %s: memory-kind gap %v, want %v", c.src, c.dst, got, c.hidden)
		}
	}
}

// A kernel's share is of its rank's summed kernel time, the base the
// report's charts and rows state: rank 0's shares add up to 100% where its
// busy union is less than its summed kernel time (streams overlapping).
func TestKernelShareOfSummedKernelTime(t *testing.T) {
	b := sampleBundle()
	b.Tables["ranks"].Rows[1][6] = int64(400000) // streams overlapped: busy below the summed time
	ev := evidence.Rollup(b, evidence.Filter{})
	k := ev.Table("kernels")
	sum := 0.0
	for r := range k.Rows {
		if evidence.Int(k, r, "rank") == 0 {
			sum += evidence.Float(k, r, "share_pct")
		}
	}
	if sum < 99.9 || sum > 100.1 {
		t.Errorf("rank 0's kernel shares add up to %.2f%%, want 100%%", sum)
	}
}
