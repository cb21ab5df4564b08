//go:build cgo

package pipeline_test

import (
	"context"
	"path/filepath"
	"strings"
	"testing"

	"github.com/tracebook/tracebook/analysis/evidence"
	"github.com/tracebook/tracebook/analysis/table"
	"github.com/tracebook/tracebook/analysis/trace"
	"github.com/tracebook/tracebook/internal/duck"
	"github.com/tracebook/tracebook/internal/testutil"
	"github.com/tracebook/tracebook/pipeline"
)

// collectDB loads paths as one trace "t", collects every area and returns
// the database too, for checks by hand.
func collectDB(t *testing.T, paths ...string) (*duck.DB, *evidence.Bundle) {
	t.Helper()
	db := openDB(t)
	ctx := context.Background()
	if _, err := db.Load(ctx, paths, trace.LoadOptions{Name: "t"}, nil); err != nil {
		t.Fatalf("Load: %v", err)
	}
	b, err := pipeline.CollectEvidence(ctx, db, []string{"all"}, evidence.Filter{}, nil)
	if err != nil {
		t.Fatalf("CollectEvidence: %v", err)
	}
	return db, b
}

// collRows indexes the collectives area by "rank collective".
func collRows(t *testing.T, b *evidence.Bundle) (*table.Table, map[string]int) {
	t.Helper()
	ct := b.Table("collectives")
	if ct == nil {
		t.Fatal("no collectives area")
	}
	idx := map[string]int{}
	for r := range ct.Rows {
		idx[itoa(int(evidence.Int(ct, r, "rank")))+" "+evidence.Str(ct, r, "collective")] = r
	}
	return ct, idx
}

func findingOf(b *evidence.Bundle, rule string) *evidence.Finding {
	for i := range b.Findings {
		if b.Findings[i].Rule == rule {
			return &b.Findings[i]
		}
	}
	return nil
}

// firstCollectives is the check by hand: the collective kernels of every
// rank numbered in start order (all of dlrm_8rank's run on one stream and
// carry no Seq), and per number the ranks that ran it, the rank that
// started last, and the spread of the starts and of the ends.
const firstCollectives = `
WITH k AS (
  SELECT rank, ts_ns, end_ns, row_number() OVER (PARTITION BY rank ORDER BY ts_ns, end_ns) AS o
  FROM events
  WHERE trace = 't' AND kind = 'kernel' AND regexp_matches(name, '^(nccl|rccl|hccl)|ncclDevKernel|ncclKernel', 'i')
)
SELECT o, count(DISTINCT rank) AS ranks, arg_max(rank, ts_ns) AS last_rank,
  max(ts_ns) - list_sort(list(ts_ns), 'DESC')[2] AS lag_ns,
  max(ts_ns) - min(ts_ns) AS start_spread_ns, max(end_ns) - min(end_ns) AS end_spread_ns
FROM k GROUP BY o ORDER BY o`

// dlrm_8rank (TorchRec DLRM, 8 V100s, one host): the first all-to-all
// starts 7.6 ms apart across the ranks and ends within microseconds; rank 7
// starts it last. The straggler is rank 7, not rank 1 (the longest
// collective kernels, the longest waiter), and the fix is not DDP's.
func TestCollectivesDLRM8Rank(t *testing.T) {
	dir := filepath.Join(testutil.SharedTraces(t), "param", "dlrm_8rank")
	db, b := collectDB(t, dir)

	inst, err := db.Query(context.Background(), firstCollectives, 0)
	if err != nil {
		t.Fatal(err)
	}
	if len(inst.Rows) == 0 {
		t.Fatal("no collective kernels")
	}
	if n := evidence.Int(inst, 0, "ranks"); n != 8 {
		t.Fatalf("first collective on %d ranks, want 8", n)
	}
	if end := evidence.Int(inst, 0, "end_spread_ns"); end > 20_000 {
		t.Errorf("first collective's ends spread over %d ns, want about the same end on every rank", end)
	}
	if st := evidence.Int(inst, 0, "start_spread_ns"); st < 1_000_000 {
		t.Errorf("first collective's starts spread over %d ns only", st)
	}
	lastRank := int(evidence.Int(inst, 0, "last_rank"))
	if lastRank != 7 {
		t.Errorf("first collective started last on rank %d, want 7", lastRank)
	}

	ct, idx := collRows(t, b)
	for rank := 0; rank < 8; rank++ {
		r, ok := idx[itoa(rank)+" all_to_all"]
		if !ok {
			t.Fatalf("rank %d: no all_to_all row (the c10d::alltoall_base_ operator names the SendRecv kernels)", rank)
		}
		n, m := evidence.Int(ct, r, "instances"), evidence.Int(ct, r, "matched")
		if n != 5 || m != n {
			t.Errorf("rank %d: %d all-to-all instances, %d matched; want 5, all matched on the 8 ranks", rank, n, m)
		}
		if w, x, mn := evidence.Int(ct, r, "wait_ns"), evidence.Int(ct, r, "transfer_ns"), evidence.Int(ct, r, "matched_ns"); w+x != mn || mn != evidence.Int(ct, r, "total_ns") {
			t.Errorf("rank %d: wait %d + transfer %d != matched %d", rank, w, x, mn)
		}
		if g := evidence.Int(ct, r, "group_size"); g != 8 {
			t.Errorf("rank %d: group size %d, want 8", rank, g)
		}
		// Rank 7 starts four of the all-to-alls last, rank 5 the fifth.
		wantLate := map[int]int64{7: 4, 5: 1}[rank]
		if l := evidence.Int(ct, r, "late"); l != wantLate {
			t.Errorf("rank %d: late in %d all-to-alls, want %d", rank, l, wantLate)
		}
		if rank != lastRank && evidence.Int(ct, r, "late_peer") != int64(lastRank) {
			t.Errorf("rank %d: late peer %v, want %d", rank, evidence.Cell(ct, r, "late_peer"), lastRank)
		}
	}
	// Rank 1 waited 7.6 ms for rank 7 in the first all-to-all alone.
	if w := evidence.Int(ct, idx["1 all_to_all"], "wait_ns"); w < 7_000_000 {
		t.Errorf("rank 1 all-to-all wait = %d ns, want more than 7 ms", w)
	}
	if c := evidence.Int(ct, idx["7 all_to_all"], "caused_ns"); c < 30_000_000 {
		t.Errorf("rank 7 caused %d ns of wait, want more than 30 ms", c)
	}

	f := findingOf(b, "rank_straggler")
	if f == nil {
		t.Fatalf("no straggler finding: %v", summary(b.Findings))
	}
	if f.Rank != lastRank || !strings.Contains(f.Observation, "Rank 7 was the last of 8 ranks to arrive") {
		t.Errorf("straggler rank %d: %s", f.Rank, f.Observation)
	}
	for _, g := range []*evidence.Finding{f, findingOf(b, "comm_not_overlapped")} {
		if g == nil {
			continue
		}
		if s := g.Fix + " " + g.Snippet; strings.Contains(s, "DDP") || strings.Contains(s, "bucket_cap_mb") {
			t.Errorf("%s fix prescribes DDP buckets for an all-to-all wait: %s", g.Rule, s)
		}
	}
	// Rank 7 is last, but only 1.3 ms ahead of the next-latest rank in all:
	// that lead times the 7 other ranks is the most that rank 7 alone
	// costs them, under half their wait, so the finding says the arrivals
	// spread out, and the waiting rank's finding names no one rank.
	if !strings.Contains(f.Title, "most of the others' wait is for ranks that arrive just before it") || f.Severity != "minor" {
		t.Errorf("straggler %s %q, want the spread of arrivals, minor", f.Severity, f.Title)
	}
	if f.Impact <= 0 || f.Impact >= 0.1 || !strings.HasPrefix(f.ImpactOf, "the other 7 ranks' GPU span") {
		t.Errorf("straggler impact %.3f of %q, want rank 7's own lead: under 10%% of the other 7 ranks' span", f.Impact, f.ImpactOf)
	}
	// Rank 1 began step 10 7.5 ms before rank 7: 7.6 ms of its 9.5 ms of
	// all-to-all wait is in the step's first all-to-all, set before the
	// step's work began; with one step captured, the fix is a longer
	// capture, not this step's work.
	r1 := idx["1 all_to_all"]
	if e, w := evidence.Int(ct, r1, "entry_wait_ns"), evidence.Int(ct, r1, "wait_ns"); e < 7_000_000 || e > w {
		t.Errorf("rank 1 all-to-all entry wait = %d ns of %d, want more than 7 ms and at most the wait", e, w)
	}
	if e := evidence.Int(ct, idx["7 all_to_all"], "entry_wait_ns"); e != 0 {
		t.Errorf("rank 7, last to arrive, entry wait = %d ns, want 0", e)
	}
	g := findingOf(b, "comm_not_overlapped")
	if g == nil || g.Rank == lastRank || !strings.Contains(g.Title, "at the step's first collective") || !strings.Contains(g.Observation, "but by only") ||
		!strings.Contains(g.Observation, "the ranks began step 10 up to 7.5 ms apart (rank 1 at 0.147 ms, rank 7 at 7.7 ms") ||
		!strings.Contains(g.Observation, "this one-step capture does not show") || !strings.HasPrefix(g.Fix, "Capture several consecutive steps") ||
		!strings.Contains(g.Snippet, "schedule(") {
		t.Errorf("comm finding: %+v", g)
	}
}

// Two ranks, one all-reduce each: rank 1 starts it 5 ms after rank 0 and
// both end together. Rank 0 waits 5 ms; rank 1 is late; the finding names
// rank 1.
func TestCollectivesTwoRankAllReduce(t *testing.T) {
	dir := t.TempDir()
	var paths []string
	for r := 0; r < 2; r++ {
		k := newKT(r, 2, "NVIDIA H100 80GB HBM3")
		start := 1000.0 + 5000*float64(r)
		k.op("user_annotation", "ProfilerStep#1", 0, 12000)
		if r == 1 {
			k.op("cpu_op", "aten::mm", 10, 20)
			k.kernel("sm90_xmma_gemm_bf16", 7, 15, 100, 5800)
		}
		k.op("cpu_op", "nccl:all_reduce", 50, 30)
		k.launch("cudaLaunchKernel", 55, 5, "kernel", "ncclDevKernel_AllReduce_Sum_f32_RING_LL(ncclDevComm*, unsigned long, ncclWork*)", 9, start, 8000-start,
			map[string]any{"Collective name": "allreduce", "Process Group Name": "0", "Process Group Description": "default_pg",
				"Group size": 2, "dtype": "Float", "In msg nelems": 1 << 20, "Out msg nelems": 1 << 20})
		paths = append(paths, k.write(t, dir, "worker"+itoa(r)+".json"))
	}
	_, b := collectDB(t, paths...)
	ct, idx := collRows(t, b)
	r0, ok0 := idx["0 all_reduce"]
	r1, ok1 := idx["1 all_reduce"]
	if !ok0 || !ok1 {
		t.Fatalf("collectives rows: %v", ct.Rows)
	}
	if pg := evidence.Str(ct, r0, "pg"); pg != "0 (default_pg)" {
		t.Errorf("pg = %q", pg)
	}
	if w := evidence.Int(ct, r0, "wait_ns"); w < 4_990_000 || w > 5_010_000 {
		t.Errorf("rank 0 wait = %d ns, want about 5 ms", w)
	}
	if x := evidence.Int(ct, r0, "transfer_ns"); x != 2_000_000 {
		t.Errorf("rank 0 transfer = %d ns, want 2 ms", x)
	}
	if m := evidence.Int(ct, r0, "matched"); m != 1 {
		t.Errorf("rank 0 matched = %d, want 1", m)
	}
	if l := evidence.Int(ct, r1, "late"); l != 1 {
		t.Errorf("rank 1 late = %d, want 1", l)
	}
	if l, w := evidence.Int(ct, r0, "late"), evidence.Int(ct, r1, "wait_ns"); l != 0 || w != 0 {
		t.Errorf("rank 0 late = %d, rank 1 wait = %d: want 0, 0", l, w)
	}
	if p := evidence.Int(ct, r0, "late_peer"); p != 1 {
		t.Errorf("rank 0 late peer = %d, want 1", p)
	}
	if by := evidence.Int(ct, r0, "sized_bytes"); by != 4<<20 {
		t.Errorf("rank 0 sized bytes = %d, want %d (1 Mi floats)", by, 4<<20)
	}
	f := findingOf(b, "rank_straggler")
	if f == nil {
		t.Fatalf("no straggler finding: %v", summary(b.Findings))
	}
	if f.Rank != 1 || !strings.Contains(f.Observation, "Rank 1 was the last of 2 ranks to arrive in 1 of 1") || !strings.Contains(f.Title, "Rank 1") {
		t.Errorf("straggler finding: rank %d %s | %s", f.Rank, f.Title, f.Observation)
	}

	// The same trace with one rank loaded: nothing to match, so no wait
	// is claimed (matched 0), and the split is reported as unknown.
	_, b1 := collectDB(t, paths[0])
	ct1, idx1 := collRows(t, b1)
	r, ok := idx1["0 all_reduce"]
	if !ok {
		t.Fatalf("one rank: collectives rows %v", ct1.Rows)
	}
	if m, w := evidence.Int(ct1, r, "matched"), evidence.Int(ct1, r, "wait_ns"); m != 0 || w != 0 {
		t.Errorf("one rank: matched %d, wait %d; want 0, 0", m, w)
	}
	if g := findingOf(b1, "comm_not_overlapped"); g != nil && !strings.Contains(g.Observation, "is unknown: only one rank is loaded") {
		t.Errorf("one rank: comm finding claims a split: %s", g.Observation)
	}
}

// vLLM TP4 on MI300X: pynccl's all-reduce runs RCCL's ncclDevKernel_Generic,
// whose name says nothing; the vllm::all_reduce operator around its launch
// names it, as it names the custom all-reduce's kernels. Every all-reduce of
// the rank is one row, none of it unknown or named from a kernel.
func TestCollectivesVLLMCustomOp(t *testing.T) {
	// 1449 custom all-reduces and 161 pynccl ones.
	wantNamed(t, filepath.Join(testutil.SharedTraces(t), "tracemap", "vllm_mi300x_tp4_rank0"), "0 unknown", "0 all_reduce", 1610)
}

// wantNamed checks that the collectives of the trace at dir hold no row
// keyed unnamed (rank and collective, as collRows keys them) and n kernels
// in the row keyed named, none of them named from the kernel name.
func wantNamed(t *testing.T, dir, unnamed, named string, n int64) {
	t.Helper()
	_, b := collectDB(t, dir)
	ct, idx := collRows(t, b)
	if r, ok := idx[unnamed]; ok {
		t.Errorf("%d collective kernels in %q", evidence.Int(ct, r, "count"), unnamed)
	}
	r, ok := idx[named]
	if !ok {
		t.Fatalf("no %q row: %v", named, ct.Rows)
	}
	if got, h := evidence.Int(ct, r, "count"), evidence.Int(ct, r, "name_hint"); got != n || h != 0 {
		t.Errorf("%s: %d kernels, %d named from the kernel; want %d, 0", named, got, h, n)
	}
}

// A 2022 trace records the range record_param_comms opens as a user
// annotation (nccl:all_to_all) with no "Collective name": it names the
// SendRecv kernels launched inside it (trace_diff_control_a100: 42
// all-to-alls, which the kernel name alone called send_recv).
func TestCollectivesNamedByAnnotation(t *testing.T) {
	wantNamed(t, filepath.Join(testutil.SharedTraces(t), "hta", "trace_diff_control_a100"), "3 send_recv", "3 all_to_all", 42)
}
