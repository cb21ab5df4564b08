package findings_test

import (
	"fmt"
	"strings"
	"testing"

	"github.com/tracebook/tracebook/analysis/evidence"
	"github.com/tracebook/tracebook/analysis/findings"
	"github.com/tracebook/tracebook/analysis/table"
)

// rk is one rank of a hand-made multi-rank bundle: its GPU time (busy =
// compute + comm, nothing overlapped) and its collective rows.
type rk struct {
	compute, comm int64
	colls         []cr
}

// cr is one collectives row: collective, kernel time, and the matched split.
type cr struct {
	coll                                string
	total, matched, wait, xfer, late    int64
	lag, caused                         int64
	peer                                any // late_peer: an int64 or nil
	peerN, groupSize, sizedB, sizedXfer int64
	hint                                int64
}

// multiBundle builds a bundle of len(ranks) ranks of trace "t" with the
// producer given; features are the workload area's rows of every rank
// (nil: no workload area). withColls false leaves the collectives area out.
func multiBundle(producer string, features []string, withColls bool, ranks ...rk) *evidence.Bundle {
	b := evidence.NewBundle()
	b.Traces = &table.Table{Columns: cols("trace rank rank_source producer platform gpu_model has_graphs has_sync_events has_python_stacks world_size")}
	b.Tables["ranks"] = &table.Table{Columns: cols("trace rank step phase events busy_ns idle_ns compute_ns comm_ns comm_comp_ns step_ns")}
	coll := &table.Table{Columns: cols("trace rank collective pg count total_ns name_hint instances matched matched_ns wait_ns transfer_ns late lag_ns caused_ns late_peer late_peer_n group_size bytes sized sized_bytes sized_transfer_ns")}
	var wl *table.Table
	if features != nil {
		wl = &table.Table{Columns: cols("trace rank feature example count total_ns")}
		b.Tables["workload"] = wl
	}
	for i, r := range ranks {
		rank := int64(i)
		b.Traces.Rows = append(b.Traces.Rows, []any{"t", rank, "distributed_info", producer, "cuda", "NVIDIA H100 80GB HBM3", false, true, true, int64(len(ranks))})
		busy := r.compute + r.comm
		b.Tables["ranks"].Rows = append(b.Tables["ranks"].Rows, []any{"t", rank, int64(1), "", int64(5000), busy, int64(1_000_000), r.compute, r.comm, busy, busy + 1_000_000})
		for _, c := range r.colls {
			matchedNs := int64(0)
			if c.matched > 0 {
				matchedNs = c.wait + c.xfer
			}
			sized := int64(0) // instances whose args give their size: all 10, or none
			if c.sizedB > 0 {
				sized = 10
			}
			coll.Rows = append(coll.Rows, []any{"t", rank, c.coll, "0 (default_pg)", int64(10), c.total, c.hint, int64(10), c.matched, matchedNs,
				c.wait, c.xfer, c.late, c.lag, c.caused, c.peer, c.peerN, c.groupSize, c.sizedB, sized, c.sizedB, c.sizedXfer})
		}
		for _, f := range features {
			// "feature=example" names the example; else it is made up.
			name, ex, ok := strings.Cut(f, "=")
			if !ok {
				ex = f + "_example"
			}
			wl.Rows = append(wl.Rows, []any{"t", rank, name, ex, int64(1), int64(1000)})
		}
	}
	if withColls {
		b.Tables["collectives"] = coll
	}
	return b
}

func find(fs []evidence.Finding, rule string) *evidence.Finding {
	for i := range fs {
		if fs[i].Rule == rule {
			return &fs[i]
		}
	}
	return nil
}

// Four ranks: rank 3 arrives last at every all-to-all; rank 0 waits longest
// (the longest collective kernels) and also computes most.
func lateRank3(coll string, producer string, features []string) *evidence.Bundle {
	waiter := func(wait int64) rk {
		return rk{compute: 20_000_000, comm: wait + 2_000_000, colls: []cr{{coll: coll, total: wait + 2_000_000, matched: 10, wait: wait, xfer: 2_000_000, peer: int64(3), peerN: 8, groupSize: 4}}}
	}
	r0 := waiter(30_000_000)
	r0.compute = 30_000_000
	return multiBundle(producer, features, true,
		r0, waiter(20_000_000), waiter(25_000_000),
		rk{compute: 45_000_000, comm: 2_100_000, colls: []cr{{coll: coll, total: 2_100_000, matched: 10, wait: 100_000, xfer: 2_000_000, late: 8, lag: 25_000_000, caused: 75_000_000, peer: nil, groupSize: 4}}})
}

// A straggler's impact is only its own lead over the next-latest rank, once
// for each other rank; when that is under half of the wait it was last in,
// the finding says the arrivals spread out, and the waiters' exposed
// communication is not folded into it.
func TestStragglerOwnWait(t *testing.T) {
	spread := func(lag int64) *evidence.Bundle {
		b := lateRank3("all_to_all", "profiler_step", []string{"backward", "torchrec"})
		c := b.Tables["collectives"]
		for _, row := range c.Rows {
			if row[1] == int64(3) {
				row[13] = lag // lag_ns
			}
		}
		return b
	}
	tests := []struct {
		name      string
		lag       int64
		wantTitle string
		wantShare float64 // own wait (lag x 3 other ranks) over the other ranks' span
	}{
		{"one late rank", 25_000_000, "Rank 3 is a straggler: it arrives last at the collectives and the other ranks wait for it", 75e6 / othersSpan},
		{"arrivals spread out", 5_000_000, "Rank 3 arrives last at the collectives, but most of the others' wait is for ranks that arrive just before it", 15e6 / othersSpan},
	}
	for _, tc := range tests {
		t.Run(tc.name, func(t *testing.T) {
			f := find(eval(spread(tc.lag), nil), "rank_straggler")
			if f == nil {
				t.Fatal("no rank_straggler finding")
			}
			if f.Title != tc.wantTitle {
				t.Errorf("title %q, want %q", f.Title, tc.wantTitle)
			}
			if d := f.Impact - tc.wantShare; d > 1e-9 || d < -1e-9 {
				t.Errorf("impact %v, want %v (the late rank's own wait over the others' span)", f.Impact, tc.wantShare)
			}
			// The own wait is the lead times the waiting ranks, and the
			// sentence says so (dlrm_8rank read "by 1.3 ms in total" and
			// "9.1 ms is rank 7's lead" side by side).
			if want := fmt.Sprintf("is their wait through rank 3's lead (the %.1f ms lead, waited by each of the 3)", float64(tc.lag)/1e6); !strings.Contains(f.Observation, want) {
				t.Errorf("observation %q lacks %q", f.Observation, want)
			}
			if want := "the other 3 ranks' GPU span (trace t, all ranks, whole trace)"; f.ImpactOf != want {
				t.Errorf("ImpactOf %q, want %q", f.ImpactOf, want)
			}
			if !strings.Contains(f.Observation, "waited 75.0 ms in those instances") {
				t.Errorf("observation lacks the whole wait: %s", f.Observation)
			}
		})
	}
}

// othersSpan is the GPU span of lateRank3's ranks 0-2 (busy plus the 1 ms
// idle multiBundle gives each rank).
const othersSpan = float64((30_000_000 + 32_000_000 + 1_000_000) + (20_000_000 + 22_000_000 + 1_000_000) + (20_000_000 + 27_000_000 + 1_000_000))

func TestStragglerIsTheLateArriver(t *testing.T) {
	tests := []struct {
		name         string
		b            *evidence.Bundle
		wantRank     int
		wantStatus   string
		wantInObs    []string
		wantNotInFix []string
		wantInFix    []string
	}{
		{
			name:     "torchrec all-to-all: the late rank, not the longest waiter",
			b:        lateRank3("all_to_all", "profiler_step", []string{"backward", "torchrec", "ddp"}),
			wantRank: 3, wantStatus: "confirmed",
			wantInObs:    []string{"Rank 3 was the last of 4 ranks to arrive in 8 of 10 matched collective instances (all_to_all 8)", "by 25.0 ms", "waited 75.0 ms", "Rank 0 has the longest collective kernels", "trace t"},
			wantInFix:    []string{"Rank 3 arrives last", "sharding plan"},
			wantNotInFix: []string{"DDP", "bucket_cap_mb"},
		},
		{
			// dlrm_8rank: rank 7 arrives last with its computation 0.4%
			// under the median rank's.
			name: "late with no more computation than the median: not the work before the collective",
			b: func() *evidence.Bundle {
				b := lateRank3("all_to_all", "profiler_step", []string{"backward", "torchrec"})
				r := b.Tables["ranks"]
				for _, row := range r.Rows {
					if row[r.Col("rank")] == int64(3) {
						row[r.Col("compute_ns")] = int64(24_000_000)
					}
				}
				return b
			}(),
			wantRank: 3, wantStatus: "confirmed",
			wantInFix:    []string{"Rank 3 arrives last, but its computation explains little of that: it is 2.0 ms longer than the median rank's (+9.1%), where its lead over the next-latest rank sums to 25.0 ms", "entry_wait_ns"},
			wantNotInFix: []string{"sharding plan"},
		},
		{
			name:     "ddp all-reduce: even out the work, no bucket advice",
			b:        lateRank3("all_reduce", "profiler_step", []string{"backward", "ddp"}),
			wantRank: 3, wantStatus: "confirmed",
			wantInObs:    []string{"(all_reduce 8)"},
			wantInFix:    []string{"Rank 3 arrives last", "even out"},
			wantNotInFix: []string{"bucket_cap_mb"},
		},
		{
			name:     "vllm tensor parallel: the host or GPU of the late rank",
			b:        lateRank3("all_reduce", "vllm", []string{}),
			wantRank: 3, wantStatus: "confirmed",
			wantInFix:    []string{"tensor-parallel ranks run the same kernels", "rank 3's host"},
			wantNotInFix: []string{"DDP", "bucket_cap_mb", "DistributedSampler"},
		},
		{
			name: "no matched collectives: compute imbalance, as a hypothesis",
			b: multiBundle("profiler_step", []string{"backward"}, true,
				rk{compute: 10_000_000, comm: 3_000_000, colls: []cr{{coll: "all_reduce", total: 3_000_000}}},
				rk{compute: 15_000_000, comm: 1_000_000, colls: []cr{{coll: "all_reduce", total: 1_000_000}}},
				rk{compute: 10_000_000, comm: 3_000_000, colls: []cr{{coll: "all_reduce", total: 3_000_000}}}),
			wantRank: 1, wantStatus: "hypothesis",
			wantInObs: []string{"Rank 1 spent 15.0 ms in computation kernels", "Which rank arrives last at the collectives is unknown: no collective instance was seen on every rank"},
			wantInFix: []string{"Check first that rank 1 is the rank the others wait for"},
		},
		{
			name: "no collectives area: compute imbalance, as a hypothesis",
			b: multiBundle("profiler_step", nil, false,
				rk{compute: 10_000_000, comm: 1_000_000}, rk{compute: 10_000_000, comm: 1_000_000}, rk{compute: 14_000_000, comm: 1_000_000}),
			wantRank: 2, wantStatus: "hypothesis",
			wantInObs: []string{"the collectives area was not collected"},
		},
	}
	for _, tc := range tests {
		t.Run(tc.name, func(t *testing.T) {
			fs := eval(tc.b, nil)
			f := find(fs, "rank_straggler")
			if f == nil {
				t.Fatalf("no rank_straggler finding: %s", rules(fs))
			}
			if f.Rank != tc.wantRank || f.Status != tc.wantStatus {
				t.Errorf("straggler = rank %d %s, want rank %d %s\n%s", f.Rank, f.Status, tc.wantRank, tc.wantStatus, f.Observation)
			}
			for _, s := range tc.wantInObs {
				if !strings.Contains(f.Observation, s) {
					t.Errorf("observation lacks %q:\n%s", s, f.Observation)
				}
			}
			for _, s := range tc.wantInFix {
				if !strings.Contains(f.Fix, s) {
					t.Errorf("fix lacks %q:\n%s", s, f.Fix)
				}
			}
			for _, s := range tc.wantNotInFix {
				if strings.Contains(f.Fix+f.Snippet, s) {
					t.Errorf("fix mentions %q:\n%s | %s", s, f.Fix, f.Snippet)
				}
			}
		})
	}
}

// Matched collectives where no rank arrives late: no straggler, even with a
// compute imbalance (the start times decide).
func TestNoStragglerWhenNobodyIsLate(t *testing.T) {
	b := multiBundle("profiler_step", []string{"backward"}, true,
		rk{compute: 10_000_000, comm: 1_000_000, colls: []cr{{coll: "all_reduce", total: 1_000_000, matched: 5, wait: 10_000, xfer: 990_000, groupSize: 2}}},
		rk{compute: 20_000_000, comm: 1_000_000, colls: []cr{{coll: "all_reduce", total: 1_000_000, matched: 5, wait: 10_000, xfer: 990_000, groupSize: 2}}})
	if f := find(eval(b, nil), "rank_straggler"); f != nil {
		t.Errorf("straggler without a late arrival: %s", f.Observation)
	}
	// A late rank whose delay costs the others under straggler_wait_minor of their span is not reported.
	b = lateRank3("all_reduce", "profiler_step", []string{"backward"})
	if f := find(eval(b, evidence.Thresholds{"straggler_wait_minor": 0.9}), "rank_straggler"); f != nil {
		t.Errorf("straggler under the threshold: %s", f.Observation)
	}
}

func TestCommExposedSplit(t *testing.T) {
	// Rank 0 of two: 40 ms of all-reduce exposed against 50 ms of compute
	// that could hide it (TestCommOutlastsCompute has less compute).
	transfer := func(producer string, features []string, coll string) *evidence.Bundle {
		row := cr{coll: coll, total: 40_000_000, matched: 10, wait: 4_000_000, xfer: 36_000_000, peer: int64(1), peerN: 2, groupSize: 8,
			sizedB: 4_000_000_000, sizedXfer: 36_000_000}
		return multiBundle(producer, features, true,
			rk{compute: 50_000_000, comm: 40_000_000, colls: []cr{row}},
			rk{compute: 50_000_000, comm: 39_000_000, colls: []cr{row}})
	}
	waiting := func(producer string, features []string, coll string) *evidence.Bundle {
		return waitingFor1(producer, features, coll, 9)
	}
	single := func(producer string, features []string, coll string) *evidence.Bundle {
		return multiBundle(producer, features, true,
			rk{compute: 50_000_000, comm: 40_000_000, colls: []cr{{coll: coll, total: 40_000_000}}})
	}
	// One rank whose args size its all-reduces: bytes moved in the whole
	// kernel time bound the bus bandwidth from below.
	sized := func(bytes int64) *evidence.Bundle {
		return multiBundle("profiler_step", []string{"backward", "ddp"}, true,
			rk{compute: 20_000_000, comm: 40_000_000, colls: []cr{{coll: "all_reduce", total: 40_000_000, groupSize: 8, sizedB: bytes}}})
	}
	tests := []struct {
		name       string
		b          *evidence.Bundle
		wantTitle  string
		wantStatus string
		wantIn     []string // in the observation
		notIn      []string
		wantFix    []string
		notFix     []string
		noSnippet  bool
	}{
		{
			name:      "waiting dominates: the finding is about the late rank",
			b:         waiting("profiler_step", []string{"backward", "ddp", "torchrec"}, "all_to_all"),
			wantTitle: "Rank 0's exposed communication is mostly waiting for rank 1 to arrive, not transfer", wantStatus: "confirmed",
			wantIn:  []string{"36.0 ms (90.0%) was waiting for the last rank to arrive and 4.0 ms transfer", "Rank 1 arrived last in 9 of them"},
			wantFix: []string{"Rank 1 arrives last", "sharding plan"},
			notFix:  []string{"DDP", "bucket_cap_mb", "prefetch"},
		},
		{
			name: "waiting dominates, the late rank only just last: the spread of arrivals, no one rank named",
			b: func() *evidence.Bundle {
				b := waiting("profiler_step", []string{"backward", "ddp", "torchrec"}, "all_to_all")
				b.Tables["collectives"].Rows[1][13] = int64(5_000_000) // lag_ns: rank 1 leads the next-latest by 5 of the 36 ms
				return b
			}(),
			wantTitle: "Rank 0's exposed communication is mostly waiting for late ranks to arrive, not transfer", wantStatus: "confirmed",
			wantIn:  []string{"Rank 1 arrived last in 9 of them, but by only 5.0 ms in total over the next-latest rank"},
			wantFix: []string{"The last rank changes from one collective to the next"},
			notFix:  []string{"Rank 1 arrives last", "bucket_cap_mb"},
		},
		{
			name:      "waiting dominates under DDP: no bucket advice",
			b:         waiting("profiler_step", []string{"backward", "ddp"}, "all_reduce"),
			wantTitle: "Rank 0's exposed communication is mostly waiting for rank 1 to arrive, not transfer", wantStatus: "confirmed",
			wantFix: []string{"Rank 1 arrives last"},
			notFix:  []string{"bucket_cap_mb"},
		},
		{
			name:      "DDP all-reduce transfer: bucket tuning after backward, and the bus bandwidth",
			b:         transfer("profiler_step", []string{"backward", "ddp"}, "all_reduce"),
			wantTitle: "Communication is exposed: computation does not hide it", wantStatus: "hypothesis",
			wantIn:  []string{"4.0 ms (10.0%) was waiting", "all_reduce 194.4 GB/s", "n = 8", "4000.0 MB over 36.0 ms"},
			wantFix: []string{"DDP is built to overlap", "bucket_cap_mb", "after the backward pass"},
		},
		{
			name: "no collective holds most of the time: the largest part, with its share",
			b: multiBundle("profiler_step", []string{"backward"}, true,
				rk{compute: 20_000_000, comm: 40_000_000, colls: []cr{{coll: "all_to_all", total: 18_000_000}, {coll: "all_reduce", total: 12_000_000}, {coll: "all_gather", total: 10_000_000}}}),
			wantTitle: "Communication is exposed: computation does not hide it", wantStatus: "hypothesis",
			wantIn: []string{"The largest part of the collective time (45.0%) is all_to_all"},
		},
		{
			name: "every kernel named by its operator: said, as the kernel name may name another operation",
			b: multiBundle("profiler_step", []string{"backward"}, true,
				rk{compute: 20_000_000, comm: 40_000_000, colls: []cr{{coll: "all_reduce", total: 26_000_000}}}),
			wantTitle: "Communication is exposed: computation does not hide it", wantStatus: "hypothesis",
			wantIn: []string{"Most of the collective time (100.0%) is all_reduce (named by the kernels' Collective name arg or the collective operator around each launch, not by the kernel name)."},
		},
		{
			name: "a third of the time in unnamed kernels: said beside the dominant share",
			b: multiBundle("profiler_step", []string{"backward"}, true,
				rk{compute: 20_000_000, comm: 40_000_000, colls: []cr{{coll: "all_reduce", total: 26_000_000}, {coll: "unknown", total: 14_000_000, hint: 10}}}),
			wantTitle: "Communication is exposed: computation does not hide it", wantStatus: "hypothesis",
			wantIn: []string{"Most of the collective time (65.0%) is all_reduce (named by the kernels' Collective name arg or the collective operator around each launch, not by the kernel name). 14.0 ms (35.0%) is in kernels that name no operation"},
		},
		{
			name:      "TorchRec all-to-all transfer: pipeline and sharding, never buckets",
			b:         transfer("profiler_step", []string{"backward", "ddp", "torchrec"}, "all_to_all"),
			wantTitle: "Communication is exposed: computation does not hide it", wantStatus: "hypothesis",
			wantIn:  []string{"all_to_all 97.2 GB/s"},
			wantFix: []string{"TrainPipelineSparseDist", "sharding plan", "their gradients' all-to-all in the backward (All2All_Pooled_WaitBackward), which no pipeline hides"},
			notFix:  []string{"DDP", "bucket_cap_mb"},
		},
		{
			name:      "FSDP all-gather transfer: prefetch",
			b:         transfer("profiler_step", []string{"backward", "fsdp"}, "all_gather"),
			wantTitle: "Communication is exposed: computation does not hide it", wantStatus: "hypothesis",
			wantFix: []string{"backward_prefetch", "forward_prefetch"},
			notFix:  []string{"DDP", "bucket_cap_mb"},
		},
		{
			name:      "vLLM tensor parallel: no DDP fix",
			b:         transfer("vllm", []string{}, "all_reduce"),
			wantTitle: "Communication is exposed: computation does not hide it", wantStatus: "hypothesis",
			wantFix: []string{"custom all-reduce", "--disable-custom-all-reduce"},
			notFix:  []string{"DDP", "bucket_cap_mb", "prefetch"},
		},
		{
			name: "vLLM whose kernels show the custom all-reduce: the fix says so, not to check it",
			b: func() *evidence.Bundle {
				b := transfer("vllm", []string{}, "all_reduce")
				b.Tables["kernels"] = &table.Table{Columns: cols("trace rank step phase stream name class count total_ns min_ns max_ns hist"), Rows: [][]any{
					{"t", int64(0), int64(1), "", int64(7), "void vllm::cross_device_reduce_1stage<__nv_bfloat16, 4>(vllm::RankData*, vllm::RankSignals, vllm::Signal*, __nv_bfloat16*, int, int)", "COMM", int64(1449), int64(7_430_000), int64(4_000), int64(99_000), ""},
					{"t", int64(0), int64(1), "", int64(7), "ncclDevKernel_AllReduce_Sum_bf16_RING_LL(ncclDevComm*, unsigned long, ncclWork*)", "COMM", int64(161), int64(16_500_000), int64(97_000), int64(152_000), ""},
				}}
				return b
			}(),
			wantTitle: "Communication is exposed: computation does not hide it", wantStatus: "hypothesis",
			wantFix: []string{"custom all-reduce is in use (1449 cross_device_reduce kernels, 7.4 ms); 161 all-reduces (16.5 ms) ran in NCCL"},
			notFix:  []string{"check that", "DDP"},
		},
		{
			name: "vLLM on ROCm: RCCL's kernels do not name the all-reduce, the collectives area does",
			b: func() *evidence.Bundle {
				b := transfer("vllm", []string{}, "all_reduce")
				for _, r := range b.Traces.Rows {
					r[b.Traces.Col("platform")] = "rocm"
				}
				co := b.Tables["collectives"]
				co.Rows[0][co.Col("count")] = int64(1610)
				co.Rows[0][co.Col("total_ns")] = int64(75_700_000)
				b.Tables["kernels"] = &table.Table{Columns: cols("trace rank step phase stream name class count total_ns min_ns max_ns hist"), Rows: [][]any{
					{"t", int64(0), int64(1), "", int64(3), "void vllm::cross_device_reduce_1stage<__hip_bfloat16, 4>(vllm::RankData*, vllm::RankSignals, vllm::Signal*, __hip_bfloat16*, int, int)", "COMM", int64(1449), int64(33_400_000), int64(4_000), int64(99_000), ""},
					{"t", int64(0), int64(1), "", int64(3), "ncclDevKernel_Generic_2(ncclDevKernelArgsStorage<4096ul>)", "COMM", int64(171), int64(42_660_000), int64(97_000), int64(300_000), ""},
				}}
				return b
			}(),
			wantTitle: "Communication is exposed: computation does not hide it", wantStatus: "hypothesis",
			wantFix: []string{"custom all-reduce is in use (1449 cross_device_reduce kernels, 33.4 ms); 161 all-reduces (42.3 ms) ran in RCCL"},
			notFix:  []string{"check that", "NCCL,"},
		},
		{
			name:      "all-reduces issued inside the backward without DDP: not the loop's async_op",
			b:         transfer("profiler_step", []string{"backward", "allreduce_in_backward"}, "all_reduce"),
			wantTitle: "Communication is exposed: computation does not hide it", wantStatus: "hypothesis",
			wantFix: []string{"inside the backward pass", "allreduce_in_backward_example", "the trace shows no DDP", "DistributedDataParallel"},
			notFix:  []string{"async_op=True", "no DDP reducer"},
		},
		{
			name:      "TorchRec's all-to-all seen as SendRecv kernels: the all-to-all fix",
			b:         transfer("profiler_step", []string{"backward", "torchrec"}, "send_recv"),
			wantTitle: "Communication is exposed: computation does not hide it", wantStatus: "hypothesis",
			wantFix: []string{"grouped sends and receives", "TrainPipelineSparseDist"},
			notFix:  []string{"bucket_cap_mb"},
		},
		{
			name:      "TorchRec's pipeline already on (sparse_data_dist ranges): the pooled embeddings' all-to-alls, not the pipeline",
			b:         transfer("profiler_step", []string{"backward", "torchrec", "torchrec_pipeline"}, "send_recv"),
			wantTitle: "Communication is exposed: computation does not hide it", wantStatus: "hypothesis",
			wantFix: []string{"grouped sends and receives", "train pipeline is already on", "forward (output dist, All2All_Pooled) and backward (their gradients)", "QCommsConfig"},
			notFix:  []string{"Pipeline the input dist", "bucket_cap_mb"},
		},
		{
			name:      "workload unknown: what to check, no snippet",
			b:         transfer("profiler_step", nil, "all_reduce"),
			wantTitle: "Communication is exposed: computation does not hide it", wantStatus: "hypothesis",
			wantFix:   []string{"Check what issues the all-reduce"},
			noSnippet: true,
		},
		{
			// vllm_mi300x_tp4_rank0: 14 custom all-reduces of 0.26-7.4 ms
			// against a 7.3 us median, each the first of a step's forward.
			name: "one vLLM rank: the custom all-reduce's tail is waiting at its barrier",
			b: func() *evidence.Bundle {
				b := single("vllm", []string{}, "all_reduce")
				ar := func(name string, n, dur int64, tailN, tail int64) []any {
					h := evidence.Hist{evidence.BucketOf(dur): n, evidence.BucketOf(tail): tailN}
					return []any{"t", int64(0), int64(1), "", int64(3), name, "COMM", n + tailN, n*dur + tailN*tail, dur, tail, h.String()}
				}
				b.Tables["kernels"] = &table.Table{Columns: cols("trace rank step phase stream name class count total_ns min_ns max_ns hist"), Rows: [][]any{
					ar("void vllm::cross_device_reduce_1stage<__hip_bfloat16, 4>(vllm::RankData*, vllm::RankSignals, vllm::Signal*, __hip_bfloat16*, int, int)", 1435, 7_300, 14, 1_500_000),
					// RCCL's all-reduces move any size: a tail of them is not read.
					ar("ncclDevKernel_Generic_2(ncclDevKernelArgsStorage<4096ul>)", 160, 100_000, 11, 2_000_000),
				}}
				return b
			}(),
			wantTitle: "Communication is exposed: computation does not hide it", wantStatus: "hypothesis",
			wantIn: []string{"is unknown: only one rank is loaded", " On this rank alone, 14 custom all-reduce kernels (cross_device_reduce) ran 10 times or more the median of their name (about 21.", "so that long it waited for peers that reached it later, and at least about 20.9 ms of the 40.0 ms is waiting, not transfer (a hypothesis until every rank's trace is loaded)."},
		},
		{
			name:      "one rank: the split is unknown, never zero wait",
			b:         single("profiler_step", []string{"backward", "ddp"}, "all_reduce"),
			wantTitle: "Communication is exposed: computation does not hide it", wantStatus: "hypothesis",
			wantIn:    []string{"is unknown: only one rank is loaded"},
			wantFix:   []string{"First split the communication into waiting for the last rank and transfer"},
			noSnippet: true,
		},
		{
			name:      "one rank, 40 MB of all-reduce in 40 ms: a bus bandwidth no GPU link is that slow at, probably waiting",
			b:         sized(40_000_000),
			wantTitle: "Communication is exposed: computation does not hide it", wantStatus: "hypothesis",
			wantIn: []string{"is unknown: only one rank is loaded", "all_reduce moved 40.0 MB in 40.0 ms of kernel time, 1.8 GB/s of bus bandwidth over that whole time (1.00 GB/s of algorithm bandwidth times 2(n-1)/n with n = 8), which includes any waiting: the transfer's own rate is at least that",
				"probably waiting for the other ranks"},
		},
		{
			name:      "one rank, 4 GB of all-reduce in 40 ms: the bound says nothing",
			b:         sized(4_000_000_000),
			wantTitle: "Communication is exposed: computation does not hide it", wantStatus: "hypothesis",
			notIn: []string{"GB/s of bus bandwidth over that whole time", "probably waiting"},
		},
		{
			name:      "one rank, messages under 1 MB: latency-bound, the bound says nothing",
			b:         sized(4_000_000),
			wantTitle: "Communication is exposed: computation does not hide it", wantStatus: "hypothesis",
			notIn: []string{"GB/s of bus bandwidth over that whole time"},
		},
	}
	for _, tc := range tests {
		t.Run(tc.name, func(t *testing.T) {
			fs := eval(tc.b, nil)
			f := find(fs, "comm_not_overlapped")
			if f == nil {
				// Waiting for a late rank folds into that rank's straggler
				// finding when its rows are loaded; alone, rank 0's filter
				// shows the waiting finding itself.
				if s := find(fs, "rank_straggler"); s == nil || !strings.Contains(s.Observation, tc.wantTitle) {
					t.Fatalf("no comm_not_overlapped finding, nor one folded into the straggler: %s", rules(fs))
				}
				fs = findings.Evaluate(evidence.Rollup(tc.b, evidence.Filter{Rank: 0, HasRank: true}), nil)
				if f = find(fs, "comm_not_overlapped"); f == nil {
					t.Fatalf("no comm_not_overlapped finding under --rank 0: %s", rules(fs))
				}
			}
			if f.Title != tc.wantTitle || f.Status != tc.wantStatus || f.Rank != 0 {
				t.Errorf("finding = rank %d %q %s, want rank 0 %q %s", f.Rank, f.Title, f.Status, tc.wantTitle, tc.wantStatus)
			}
			checkWords(t, f, tc.wantIn, tc.notIn, tc.wantFix, tc.notFix)
			if tc.noSnippet && f.Snippet != "" {
				t.Errorf("snippet %q where the fix only says what to check", f.Snippet)
			}
			if strings.Contains(f.Observation, "0.000 ms (0.0%) was waiting") {
				t.Errorf("zero wait reported: %s", f.Observation)
			}
		})
	}
}

// Under a rank filter the late rank's rows are absent: the waiting rank's
// finding names it only when it arrived last in most matched instances.
func TestCommWaitingUnderRankFilter(t *testing.T) {
	for _, tc := range []struct {
		peerN     int64
		wantTitle string
		wantObs   string
		wantWait  string
	}{
		{9, "Rank 0's exposed communication is mostly waiting for rank 1 to arrive, not transfer", "Rank 1 arrived last in 9 of them.",
			"of rank 0's 40.0 ms of matched collective time, 36.0 ms (90.0%) was waiting for rank 1 to arrive and 4.0 ms transfer"},
		{4, "Rank 0's exposed communication is mostly waiting for late ranks to arrive, not transfer", "Rank 1 arrived last in 4 of them, not in most",
			"of rank 0's 40.0 ms of matched collective time, 36.0 ms (90.0%) was waiting for late ranks to arrive and 4.0 ms transfer"},
	} {
		b := waitingFor1("profiler_step", []string{"backward", "ddp"}, "all_reduce", tc.peerN)
		f := find(findings.Evaluate(evidence.Rollup(b, evidence.Filter{Rank: 0, HasRank: true}), nil), "comm_not_overlapped")
		if f == nil {
			t.Fatalf("peerN %d: no comm_not_overlapped finding under --rank 0", tc.peerN)
		}
		if f.Title != tc.wantTitle || !strings.Contains(f.Observation, tc.wantObs) {
			t.Errorf("peerN %d: %q\n%s\nwant %q and %q", tc.peerN, f.Title, f.Observation, tc.wantTitle, tc.wantObs)
		}
		if f.Wait != tc.wantWait {
			t.Errorf("peerN %d: wait %q, want %q", tc.peerN, f.Wait, tc.wantWait)
		}
	}
}

// waitingFor1 is two ranks: rank 0's exposed communication is 90% waiting,
// and rank 1 arrives last in peerN of its 10 matched instances, 35 ms
// ahead of rank 0 (a straggler).
func waitingFor1(producer string, features []string, coll string, peerN int64) *evidence.Bundle {
	return multiBundle(producer, features, true,
		rk{compute: 20_000_000, comm: 40_000_000, colls: []cr{{coll: coll, total: 40_000_000, matched: 10, wait: 36_000_000, xfer: 4_000_000, peer: int64(1), peerN: peerN, groupSize: 2}}},
		rk{compute: 30_000_000, comm: 4_500_000, colls: []cr{{coll: coll, total: 4_500_000, matched: 10, wait: 500_000, xfer: 4_000_000, late: 9, lag: 35_000_000, caused: 36_000_000, groupSize: 2}}})
}

// Communication that outlasts the computation that could hide it: the
// finding says how much stays exposed whatever the overlap, and the fix is
// the transfer itself (the link, the transport, fewer bytes), not bucket
// sizes (mi300x_resnet_act_checkpoint: 71.5 ms of all-reduce against 25.7
// ms of computation, on 8 MI300X of one node, was offered bucket_cap_mb
// and "a group spanning hosts"). Where the trace shows the job on one
// node, the slow network between hosts is not offered.
func TestCommOutlastsCompute(t *testing.T) {
	// layout sets every rank's world size and, where gpus is not nil, the
	// traces table's gpu_count (the deviceProperties the process sees).
	layout := func(b *evidence.Bundle, world int64, gpus any) *evidence.Bundle {
		if gpus != nil {
			b.Traces.Columns = append(b.Traces.Columns, cols("gpu_count")...)
		}
		for i, r := range b.Traces.Rows {
			r[b.Traces.Col("world_size")] = world
			if gpus != nil {
				b.Traces.Rows[i] = append(r, gpus)
			}
		}
		return b
	}
	// One DDP rank of an 8-rank job: 40 MB of all-reduce in 40 ms (a bus
	// bandwidth bound of 1.8 GB/s) against compute ms of computation.
	one := func(compute int64, features ...string) *evidence.Bundle {
		if features == nil {
			features = []string{"backward", "ddp"}
		}
		return multiBundle("profiler_step", features, true,
			rk{compute: compute, comm: 40_000_000, colls: []cr{{coll: "all_reduce", total: 40_000_000, groupSize: 8, sizedB: 40_000_000}}})
	}
	// Two ranks whose matched instances are mostly transfer.
	matched := func(compute int64, coll string, features ...string) *evidence.Bundle {
		row := cr{coll: coll, total: 40_000_000, matched: 10, wait: 4_000_000, xfer: 36_000_000, peer: int64(1), peerN: 2, groupSize: 8,
			sizedB: 4_000_000_000, sizedXfer: 36_000_000}
		return multiBundle("profiler_step", features, true,
			rk{compute: compute, comm: 40_000_000, colls: []cr{row}},
			rk{compute: compute, comm: 39_000_000, colls: []cr{row}})
	}
	const bound = "Communication (40.0 ms) outlasts computation (20.0 ms): with every computation kernel under a collective, 20.0 ms of communication would still run alone, so overlap settings (bucket sizes, prefetch, earlier launches) can hide at most the 20.0 ms of computation that no collective covers yet; the rest only shorter collectives remove."
	const oneNode = "and the job is most likely on one node (its world size, 8, fits on the 8 GPUs its process sees; an inference: the trace does not name the hosts), so no network between hosts slows it: either most of this time is waiting for the other ranks to arrive, or the collective library moves the data over a slower path than the GPUs' links (two hypotheses"
	const hosts = "a group spanning hosts on a slow network would transfer this slowly too"
	const overlapDDP = "a smaller bucket_cap_mb helps only with transfer left after the backward pass's last kernel"
	tests := []struct {
		name        string
		b           *evidence.Bundle
		wantIn      []string // in the observation
		notIn       []string
		wantFix     []string
		notFix      []string // in the fix or the snippet
		wantSnippet string   // "": none
	}{
		{
			name:    "one rank of a one-node job: the bound, no hosts, the transfer's fix without a snippet",
			b:       layout(one(20_000_000), 8, int64(8)),
			wantIn:  []string{bound, oneNode, "1.8 GB/s of bus bandwidth over that whole time"},
			notIn:   []string{hosts},
			wantFix: []string{"Communication outlasts computation, so overlap settings (bucket sizes, prefetch) cannot hide all of it: shorten the collectives themselves.", "nccl-tests' all_reduce_perf on 8 GPUs (-g 8)", "which transport NCCL picks (NCCL_DEBUG=INFO", "If it is transfer, fewer bytes help: DDP can send its gradients in half the bytes with a compression hook (default_hooks.bf16_compress_hook", "Fewer all-reduces per sample help with the transfer", "under model.no_sync()"},
			notFix:  []string{overlapDDP, "bucket_cap_mb=", "Activation checkpointing"},
		},
		{
			// mi300x_resnet_act_checkpoint: checkpointing frees the memory a
			// larger batch needs.
			name:    "DDP with activation checkpointing",
			b:       layout(one(20_000_000, "backward", "ddp", "activation_checkpointing"), 8, int64(8)),
			wantFix: []string{"a larger per-GPU batch", "Activation checkpointing is on (torch/utils/checkpoint.py frames)"},
			notFix:  []string{"samples per call"},
		},
		{
			// mi300x_resnet_act_checkpoint: its convolutions take 10 samples.
			name:    "DDP with the convolutions' batch recorded",
			b:       layout(one(20_000_000, "backward", "ddp", "conv_batch=10"), 8, int64(8)),
			wantFix: []string{"a larger per-GPU batch", "Its convolutions take 10 samples per call on rank 0 (their recorded Input Dims): the per-GPU batch to grow."},
		},
		{
			name: "ROCm: RCCL and rccl-tests",
			b: func() *evidence.Bundle {
				b := layout(one(20_000_000), 8, int64(8))
				b.Traces.Rows[0][b.Traces.Col("platform")] = "rocm"
				return b
			}(),
			wantIn:  []string{bound, oneNode},
			wantFix: []string{"rccl-tests' all_reduce_perf on 8 GPUs (-g 8)", "which transport RCCL picks"},
			notFix:  []string{"nccl-tests"},
		},
		{
			name:    "the world does not fit on the GPUs one process sees: hosts kept",
			b:       layout(one(20_000_000), 16, int64(8)),
			wantIn:  []string{bound, hosts},
			notIn:   []string{"the job is most likely on one node"},
			wantFix: []string{"shorten the collectives themselves"},
		},
		{
			name:   "the trace does not say how many GPUs the process sees: hosts kept",
			b:      layout(one(20_000_000), 8, nil),
			wantIn: []string{hosts},
			notIn:  []string{"the job is most likely on one node"},
		},
		{
			name:    "computation outlasts communication: no bound, the overlap fix kept",
			b:       layout(one(50_000_000), 8, int64(8)),
			wantIn:  []string{oneNode},
			notIn:   []string{"outlasts computation", hosts},
			wantFix: []string{"First split the communication into waiting for the last rank and transfer", overlapDDP},
			notFix:  []string{"nccl-tests", "compress_hook"},
		},
		{
			name: "part of the computation already under collectives: only the rest can still hide communication",
			b: func() *evidence.Bundle {
				b := layout(one(20_000_000), 8, int64(8))
				b.Tables["ranks"].Rows[0][b.Tables["ranks"].Col("comm_comp_ns")] = int64(45_000_000) // 15 ms overlapped
				return b
			}(),
			wantIn:  []string{"20.0 ms of communication would still run alone", "can hide at most the 5.0 ms of computation that no collective covers yet"},
			wantFix: []string{"shorten the collectives themselves"},
		},
		{
			name: "GPU work before the window leaves too little communication: no bound",
			b: func() *evidence.Bundle {
				b := layout(one(20_000_000), 8, int64(8))
				b.Tables["capture"] = captureTable(capRow("pre_window", "ncclDevKernel_Generic_4", 30, 25_000_000, 2_000_000, 0, 0))
				return b
			}(),
			notIn:   []string{"outlasts computation"},
			wantFix: []string{overlapDDP},
		},
		{
			name: "GPU work before the window, communication outlasts computation without it too",
			b: func() *evidence.Bundle {
				b := layout(one(20_000_000), 8, int64(8))
				b.Tables["capture"] = captureTable(capRow("pre_window", "ncclDevKernel_Generic_4", 10, 10_000_000, 2_000_000, 0, 0))
				return b
			}(),
			wantIn:  []string{"Communication (40.0 ms) outlasts computation (20.0 ms), even with all 10.0 ms of GPU work launched before the window left out: with every computation kernel under a collective, 20.0 ms of communication would still run alone (10.0 ms without that work), so"},
			wantFix: []string{"shorten the collectives themselves"},
		},
		{
			name:        "matched DDP transfer: fewer bytes outright, with the hook",
			b:           matched(20_000_000, "all_reduce", "backward", "ddp"),
			wantIn:      []string{"36.0 ms transfer after it", "all_reduce 194.4 GB/s", bound},
			wantFix:     []string{"shorten the collectives themselves", "Either way, fewer bytes help: DDP can send its gradients"},
			notFix:      []string{overlapDDP, "If it is transfer", "bucket_cap_mb="},
			wantSnippet: "default_hooks.bf16_compress_hook",
		},
		{
			// mi300x_resnet_act_checkpoint: DDP's all-reduces already carry bf16.
			name: "matched DDP transfer already in bf16: no hook that halves the bytes",
			b: func() *evidence.Bundle {
				b := matched(20_000_000, "all_reduce", "backward", "ddp")
				t := b.Tables["collectives"]
				t.Columns = append(t.Columns, table.Column{Name: "max_elem_bytes", Type: "BIGINT", Unit: "BYTES"})
				for i := range t.Rows {
					t.Rows[i] = append(t.Rows[i], int64(2))
				}
				return b
			}(),
			wantFix: []string{"shorten the collectives themselves", "DDP's gradients already travel as 2-byte elements", "powerSGD_hook", "a larger per-GPU batch, or gradients accumulated over k micro-batches"},
			notFix:  []string{"in half the bytes", "register_comm_hook"},
		},
		{
			name:        "matched FSDP all-gather transfer: mixed precision, not prefetch",
			b:           matched(20_000_000, "all_gather", "backward", "fsdp"),
			wantIn:      []string{bound},
			wantFix:     []string{"nccl-tests' all_gather_perf", "bf16 mixed precision"},
			notFix:      []string{"backward_prefetch=", "DDP", "no_sync"},
			wantSnippet: "MixedPrecision(param_dtype=torch.bfloat16",
		},
		{
			name:        "TorchRec's all-to-all as SendRecv kernels: alltoall_perf and quantized comms",
			b:           matched(20_000_000, "send_recv", "backward", "torchrec"),
			wantFix:     []string{"nccl-tests' alltoall_perf", "QCommsConfig"},
			notFix:      []string{"bucket_cap_mb", "sendrecv_perf"},
			wantSnippet: "QCommsConfig",
		},
		{
			name:    "vLLM tensor parallel: the bound said, the serving fix kept",
			b:       matched(20_000_000, "all_reduce"),
			wantIn:  []string{bound},
			notFix:  []string{"nccl-tests", "DDP"},
			wantFix: []string{"custom all-reduce"},
		},
	}
	// The vLLM case's producer.
	for _, r := range tests[len(tests)-1].b.Traces.Rows {
		r[tests[len(tests)-1].b.Traces.Col("producer")] = "vllm"
	}
	for _, tc := range tests {
		t.Run(tc.name, func(t *testing.T) {
			f := find(eval(tc.b, nil), "comm_not_overlapped")
			if f == nil {
				t.Fatal("no comm_not_overlapped finding")
			}
			checkWords(t, f, tc.wantIn, tc.notIn, tc.wantFix, tc.notFix)
			if tc.wantSnippet == "" && f.Snippet != "" && strings.Contains(f.Fix, "If it is transfer") {
				t.Errorf("snippet %q where the split is unknown", f.Snippet)
			}
			if tc.wantSnippet != "" && !strings.Contains(f.Snippet, tc.wantSnippet) {
				t.Errorf("snippet %q lacks %q", f.Snippet, tc.wantSnippet)
			}
		})
	}
}

// checkWords checks a finding's observation for the phrases it must and
// must not hold, and its fix (the snippet too, for the ones it must not).
func checkWords(t *testing.T, f *evidence.Finding, wantIn, notIn, wantFix, notFix []string) {
	t.Helper()
	for _, s := range wantIn {
		if !strings.Contains(f.Observation, s) {
			t.Errorf("observation lacks %q:\n%s", s, f.Observation)
		}
	}
	for _, s := range notIn {
		if strings.Contains(f.Observation, s) {
			t.Errorf("observation has %q:\n%s", s, f.Observation)
		}
	}
	for _, s := range wantFix {
		if !strings.Contains(f.Fix, s) {
			t.Errorf("fix lacks %q:\n%s", s, f.Fix)
		}
	}
	for _, s := range notFix {
		if strings.Contains(f.Fix+f.Snippet, s) {
			t.Errorf("fix mentions %q:\n%s | %s", s, f.Fix, f.Snippet)
		}
	}
}
