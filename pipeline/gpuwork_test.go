//go:build cgo

package pipeline_test

import (
	"strings"
	"testing"

	"github.com/tracebook/tracebook/analysis/evidence"
	"github.com/tracebook/tracebook/analysis/findings"
)

// Device-side sync records (cat cuda_sync, kind gpu_sync) are not GPU work
// (tb_gpu_work, sql/views.sql): every area that counts GPU events or GPU
// busy, idle and host-wait time leaves them out, as the cross-view does. Two
// steps of one kernel each, an Event Sync record before the first kernel, a
// Stream Wait Event record in the idle gap between them and a Context Sync
// record past the last: 2 GPU events, 0.5 ms busy, a 1.4 ms GPU span and 0.9
// ms idle (with the records: 5 events, 1.02 ms busy, a 1.97 ms span).
func TestSyncRecordsAreNotGPUWork(t *testing.T) {
	k := newKT(0, 1, "NVIDIA H100 80GB HBM3")
	k.op("user_annotation", "ProfilerStep#1", 0, 1000)
	k.op("user_annotation", "ProfilerStep#2", 1000, 1000)
	k.launch("cudaEventSynchronize", 10, 5, "cuda_sync", "Event Sync", -1, 20, 30, nil)
	k.kernel("sm90_xmma_gemm_bf16", 7, 50, 100, 200)
	k.launch("cudaStreamWaitEvent", 400, 5, "cuda_sync", "Stream Wait Event", 7, 500, 100, nil)
	k.kernel("sm90_xmma_gemm_bf16", 7, 1100, 1200, 300)
	k.launch("cudaDeviceSynchronize", 1600, 400, "cuda_sync", "Context Sync", -1, 1600, 390, nil)
	b := collect(t, k.write(t, t.TempDir(), "syncs.json"))

	ov := b.Table("overview")
	if len(ov.Rows) != 1 {
		t.Fatalf("%d overview rows, want 1", len(ov.Rows))
	}
	if got := evidence.Int(ov, 0, "gpu_events"); got != 2 {
		t.Errorf("overview gpu_events = %d, want 2 (the kernels; sync records are not GPU events)", got)
	}
	if !evidence.Bool(ov, 0, "has_sync_events") {
		t.Error("overview has_sync_events = false, want true")
	}

	rk := b.Table("ranks")
	sum := func(col string) int64 {
		var n int64
		for r := range rk.Rows {
			n += evidence.Int(rk, r, col)
		}
		return n
	}
	want := map[string]int64{"events": 2, "busy_ns": 500_000, "idle_ns": 900_000, "kernel_ns": 500_000, "compute_ns": 500_000, "mem_ns": 0}
	for col, w := range want {
		if got := sum(col); got != w {
			t.Errorf("ranks %s = %d, want %d", col, got, w)
		}
	}
	var first, last int64 = -1, -1
	for r := range rk.Rows {
		if evidence.Int(rk, r, "events") == 0 {
			continue
		}
		if f := evidence.Int(rk, r, "first_ns"); first < 0 || f < first {
			first = f
		}
		last = max(last, evidence.Int(rk, r, "last_ns"))
	}
	if last-first != 1_400_000 {
		t.Errorf("ranks GPU span %d..%d = %d ns, want 1,400,000 (first kernel to last)", first, last, last-first)
	}

	st := b.Table("steps")
	var got []string
	for r := range st.Rows {
		got = append(got, itoa(int(evidence.Int(st, r, "gpu_events")))+"/"+itoa(int(evidence.Int(st, r, "gpu_busy_ns"))))
	}
	if strings.Join(got, " ") != "1/200000 1/300000" {
		t.Errorf("steps gpu_events/gpu_busy_ns = %q, want [1/200000 1/300000]", got)
	}

	// The capture gate counts GPU operations and judges their span.
	g := findings.Assess(evidence.Rollup(b, evidence.Filter{}))
	var short string
	for _, a := range g.Artifacts {
		if a.Kind == "too_short" {
			short = a.Detail
		}
	}
	if !strings.HasPrefix(short, "2 GPU events over a GPU span of 1.4 ms") {
		t.Errorf("too_short artifact = %q, want 2 GPU events over 1.4 ms", short)
	}
}
