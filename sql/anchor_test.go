//go:build cgo

package sql_test

import (
	"context"
	"encoding/json"
	"os"
	"path/filepath"
	"strings"
	"testing"

	"github.com/tracebook/tracebook/analysis/evidence"
	"github.com/tracebook/tracebook/analysis/findings"
	"github.com/tracebook/tracebook/analysis/report"
	"github.com/tracebook/tracebook/analysis/table"
	"github.com/tracebook/tracebook/analysis/trace"
	"github.com/tracebook/tracebook/internal/duck"
	"github.com/tracebook/tracebook/internal/testutil"
	"github.com/tracebook/tracebook/sql"
)

// loadAs loads the trace at path as trace t into a new database.
func loadAs(t *testing.T, path string) (*duck.DB, context.Context) {
	t.Helper()
	db, err := duck.Open("", duck.Options{CacheDir: "-", Threads: 2, MemoryLimit: "2GB"})
	if err != nil {
		t.Fatalf("duck.Open: %v", err)
	}
	t.Cleanup(func() { db.Close() })
	ctx := context.Background()
	if _, err := db.Load(ctx, []string{path}, trace.LoadOptions{Name: "t"}, nil); err != nil {
		t.Fatalf("Load: %v", err)
	}
	return db, ctx
}

// alexNet loads the AlexNet sample as trace t.
func alexNet(t *testing.T) (*duck.DB, context.Context) {
	t.Helper()
	return loadAs(t, filepath.Join(testutil.RepoRoot(t), "testdata", "hta", "critical_path_alexnet", "benchmark_result_2869224_1695835535_trace.json.gz"))
}

// anchors runs the Perfetto anchor preset on rank 0 of trace t.
func anchors(t *testing.T, db *duck.DB, ctx context.Context) *table.Table {
	t.Helper()
	p, _ := sql.Lookup(sql.PerfettoAnchor)
	a, err := db.Query(ctx, p.SQL, 0, "t", 0, 0, 0)
	if err != nil {
		t.Fatal(err)
	}
	return a
}

// anchorRow is the row of the anchor kind in a, -1 when none.
func anchorRow(a *table.Table, kind string) int {
	for r := range a.Rows {
		if evidence.Str(a, r, "anchor") == kind {
			return r
		}
	}
	return -1
}

// TestSyncAnchorOpenedTheLongestGap: the sync anchor is the blocking call
// that opened the longest GPU gap (in the AlexNet sample a
// cudaStreamSynchronize inside aten::to, whose gap the sync area's
// max_gap_ns gives), not the longest call (an explicit
// cudaDeviceSynchronize that opened none), and never a pageable copy.
func TestSyncAnchorOpenedTheLongestGap(t *testing.T) {
	db, ctx := alexNet(t)
	a := anchors(t, db, ctx)
	r := anchorRow(a, "sync")
	if r < 0 {
		t.Fatal("no sync anchor")
	}
	if got := evidence.Str(a, r, "name"); got != "cudaStreamSynchronize" {
		t.Errorf("sync anchor = %s (%d ns), want the cudaStreamSynchronize that opened the longest gap", got, evidence.Int(a, r, "dur_ns"))
	}
}

// TestMarkedAnchorIsTheRulesKernel: a window of elementwise_dominated on a
// rank without steps centres on the longest of the kernels the rule's marks
// flag (its own predicate, judged over the preset's kernel_name rows), over
// the AlexNet sample's kernels; a window whose marks flag none of them (a
// storm of kernels the rank lacks) centres on the longest GPU gap instead.
func TestMarkedAnchorIsTheRulesKernel(t *testing.T) {
	db, ctx := alexNet(t)
	k, err := db.Query(ctx, `SELECT kind, name, tb_kernel_class(kind, name) AS class, ts_ns - (SELECT min(first_ts_ns) FROM traces) AS start_ns, dur_ns
		FROM events WHERE trace = 't' AND rank = 0 AND ph = 'X' AND kind = 'kernel'`, 0)
	if err != nil {
		t.Fatal(err)
	}
	rule := findings.RuleOf("elementwise_dominated")
	var flagged int
	best := -1
	for r := range k.Rows {
		e := findings.Event{Kind: evidence.Str(k, r, "kind"), Name: evidence.Str(k, r, "name"), Class: evidence.Str(k, r, "class"), Dur: evidence.Int(k, r, "dur_ns")}
		if !rule.Marks.Event(e, findings.Subject{}) {
			continue
		}
		flagged++
		if d := evidence.Int(k, r, "dur_ns"); best < 0 || d > evidence.Int(k, best, "dur_ns") ||
			d == evidence.Int(k, best, "dur_ns") && evidence.Int(k, r, "start_ns") < evidence.Int(k, best, "start_ns") {
			best = r
		}
	}
	if flagged == 0 {
		t.Fatal("the sample has no eager elementwise kernel: pick another trace")
	}
	a := anchors(t, db, ctx)
	w := report.Window{Rule: "elementwise_dominated", Anchor: rule.Anchor, Rank: 0}
	report.PlaceAnchor(&w, a, 0)
	if w.FocusStartNs != evidence.Int(k, best, "start_ns") || w.FocusEndNs-w.FocusStartNs != evidence.Int(k, best, "dur_ns") ||
		!strings.Contains(w.Basis, evidence.Str(k, best, "name")[:40]) {
		t.Errorf("elementwise window on %d..%d ns (%s), want the kernel %q at %d ns (%d ns)", w.FocusStartNs, w.FocusEndNs, w.Basis,
			evidence.Str(k, best, "name"), evidence.Int(k, best, "start_ns"), evidence.Int(k, best, "dur_ns"))
	}
	storm := report.Window{Rule: "short_kernel_storm", Anchor: findings.RuleOf("short_kernel_storm").Anchor, Rank: 0,
		Subject: &findings.Subject{Names: []string{"no such kernel"}}}
	report.PlaceAnchor(&storm, a, 0)
	if !strings.Contains(storm.Basis, findings.AnchorWords["gap"]) {
		t.Errorf("storm window whose kernels the rank lacks: basis %q, want the longest GPU gap", storm.Basis)
	}
}

// TestMemoryAnchorIsThePeak: the memory anchor is the [memory] event of a
// GPU with the largest Total Allocated or Total Reserved (the peak the
// memory_peak finding reports), not the CPU allocator's and not the last.
func TestMemoryAnchorIsThePeak(t *testing.T) {
	mem := func(ts, devType, allocated, reserved int64) map[string]any {
		return map[string]any{"ph": "i", "s": "t", "cat": "cpu_instant_event", "name": "[memory]", "pid": 1, "tid": 1, "ts": ts,
			"args": map[string]any{"Device Type": devType, "Device Id": 0, "Bytes": 1024, "Total Allocated": allocated, "Total Reserved": reserved}}
	}
	doc := map[string]any{
		"schemaVersion":    1,
		"deviceProperties": []any{map[string]any{"id": 0, "name": "NVIDIA H100 80GB HBM3", "totalGlobalMem": 85018279936, "computeMajor": 9, "computeMinor": 0}},
		"traceEvents": []any{
			map[string]any{"ph": "X", "cat": "cpu_op", "name": "aten::mm", "pid": 1, "tid": 1, "ts": 0, "dur": 100},
			mem(10, 1, 1<<30, 2<<30),
			mem(20, 1, 3<<30, 2<<30), // the peak: 3 GiB allocated
			mem(30, 0, 9<<30, 9<<30), // the CPU allocator's: not a device peak
			mem(40, 1, 1<<30, 3<<30-1),
		},
	}
	b, err := json.Marshal(doc)
	if err != nil {
		t.Fatal(err)
	}
	path := filepath.Join(t.TempDir(), "mem.json")
	if err := os.WriteFile(path, b, 0o644); err != nil {
		t.Fatal(err)
	}
	db, ctx := loadAs(t, path)
	a := anchors(t, db, ctx)
	r := anchorRow(a, "memory")
	if r < 0 {
		t.Fatalf("no memory anchor: %v", a.Rows)
	}
	if got := evidence.Int(a, r, "start_ns"); got != 20_000 || evidence.Int(a, r, "dur_ns") != 0 {
		t.Errorf("memory anchor at %d ns (%d ns long), want the peak at 20000 ns, 0 long", got, evidence.Int(a, r, "dur_ns"))
	}
}
