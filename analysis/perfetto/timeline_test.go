package perfetto

import (
	"reflect"
	"strconv"
	"testing"

	"github.com/tracebook/tracebook/analysis/report"
)

// covered is the time of [a, b) that the spans cover.
func covered(spans []report.Span, a, b int64) int64 {
	var n int64
	for _, s := range spans {
		n += max(0, min(b, s.StartNs+s.DurNs)-max(a, s.StartNs))
	}
	return n
}

// TestTimelineSyncWindow: the planted sync window becomes one host lane
// (the python thread) and one GPU lane (stream 7); the host lane shows the
// 5 ms sync call as a sync span, the GPU lane covers both kernels and
// leaves the drained gap idle, the finding lane marks the sync call and the
// GPU idle after it, and the window's times are from the window's start.
func TestTimelineSyncWindow(t *testing.T) {
	in := syncWindow()
	tl := Timeline(in)
	if tl == nil {
		t.Fatal("no timeline")
	}
	if len(tl.Lanes) != 2 || tl.Lanes[0].GPU || !tl.Lanes[1].GPU {
		t.Fatalf("lanes %+v, want a host thread then a GPU stream", tl.Lanes)
	}
	if tl.Lanes[0].Name != "thread 100" || tl.Lanes[1].Name != "GPU stream 7" {
		t.Errorf("lane names %q, %q", tl.Lanes[0].Name, tl.Lanes[1].Name)
	}
	col := (in.Window.EndNs - in.Window.StartNs) / timelineCols // one column, ns
	// The sync call: 1.33 .. 6.33 ms from the trace start, 0.33 .. 5.33 ms
	// from the window's.
	var syncNs int64
	for _, s := range tl.Lanes[0].Spans {
		if s.Kind == report.SpanSync {
			syncNs += s.DurNs
			if s.StartNs > 330_000+col || s.StartNs+s.DurNs < 5_330_000-col {
				t.Errorf("sync span %+v does not cover the call (0.33 .. 5.33 ms)", s)
			}
		}
	}
	if syncNs < 5_000_000-2*col || syncNs > 5_000_000+2*col {
		t.Errorf("sync spans cover %d ns, want the 5 ms call", syncNs)
	}
	gpu := tl.Lanes[1]
	if gpu.BusyNs != 4_002_500+500_000 {
		t.Errorf("GPU busy %d ns, want the two kernels' 4.5025 ms", gpu.BusyNs)
	}
	if c := covered(gpu.Spans, 100_000, 4_102_500); c < 4_002_500-col {
		t.Errorf("the first kernel is covered %d ns of 4002500", c)
	}
	if c := covered(gpu.Spans, 4_102_500+col, 6_500_000-col); c != 0 {
		t.Errorf("the drained gap shows %d ns busy", c)
	}
	if len(tl.Marks) == 0 || covered(tl.Marks, 330_000, 5_330_000) < 5_000_000-2*col || covered(tl.Marks, 4_102_500+col, 6_500_000-col) == 0 {
		t.Errorf("marks %+v do not cover the sync call and the GPU gap after it", tl.Marks)
	}
	if tl.MarkWhat == "" || tl.Events != 7 || tl.HostLanes != 1 || tl.GPULanes != 1 {
		t.Errorf("timeline %+v", tl)
	}
	for _, l := range tl.Lanes {
		for _, s := range l.Spans {
			if s.StartNs < 0 || s.DurNs <= 0 || s.StartNs+s.DurNs > in.Window.EndNs-in.Window.StartNs {
				t.Errorf("lane %s: span %+v outside the window", l.Name, s)
			}
		}
	}
}

// TestTimelinesAsTimeline: Timelines reads the rows that findings share
// once, and draws each finding's timeline as Timeline does alone; its
// flagged intervals are its own.
func TestTimelinesAsTimeline(t *testing.T) {
	a := syncWindow()
	b := a
	b.Window.N, b.Window.Rule = 2, "host_bound_idle"
	b.Finding.Rule = "host_bound_idle"
	empty := a
	empty.Window.EndNs = empty.Window.StartNs
	got := Timelines([]Input{a, b, empty})
	for i, in := range []Input{a, b, empty} {
		if want := Timeline(in); !reflect.DeepEqual(got[i], want) {
			t.Errorf("timeline %d (%s): %+v, want %+v", i, in.Window.Rule, got[i], want)
		}
	}
	if got[0] == nil || got[2] != nil {
		t.Fatalf("timelines %v: want the sync window's and none for the empty window", got)
	}
	if reflect.DeepEqual(got[0].Marks, got[1].Marks) {
		t.Error("two findings' timelines flag the same intervals")
	}
}

// TestTimelineCaps: a window with many threads and streams and thousands
// of short kernels keeps the busiest lanes and at most MaxSpans spans a
// lane.
func TestTimelineCaps(t *testing.T) {
	in := syncWindow()
	r := &rowsTable{t: in.Rows}
	const t0 = int64(1_700_000_000_000_000)
	for tid := 0; tid < 9; tid++ {
		r.event("100", strconv.Itoa(200+tid), "cpu_op", "", "cpu_op", "op", t0+2_000_000, int64(100_000*(tid+1)), nil)
	}
	for st := 0; st < 10; st++ {
		for k := 0; k < 400; k++ {
			// 10 us kernels every 45 us: gaps wider than a column.
			r.add(map[string]any{"row_kind": "event", "pid": "0", "tid": strconv.Itoa(20 + st), "kind": "kernel", "name": "k",
				"ts_ns": t0 + 1_000_000 + int64(k)*45_000, "dur_ns": int64(10_000 + st), "stream": int64(20 + st), "device": int64(0)})
		}
	}
	tl := Timeline(in)
	host, gpu := 0, 0
	for _, l := range tl.Lanes {
		if l.GPU {
			gpu++
		} else {
			host++
		}
		if len(l.Spans) > report.MaxSpans {
			t.Errorf("lane %s: %d spans, more than %d", l.Name, len(l.Spans), report.MaxSpans)
		}
	}
	if host != report.MaxHostLanes || gpu != report.MaxGPULanes || tl.HostLanes != 10 || tl.GPULanes != 11 {
		t.Errorf("lanes: %d host of %d, %d GPU of %d", host, tl.HostLanes, gpu, tl.GPULanes)
	}
	if tl.Lanes[0].Name != "thread 100" {
		t.Errorf("the launching thread (busiest) is not kept first: %q", tl.Lanes[0].Name)
	}
}

// TestTimelineEmpty: a window without events or length has no timeline.
func TestTimelineEmpty(t *testing.T) {
	in := syncWindow()
	in.Rows = newRows(0, 0, 0, true).t
	if tl := Timeline(in); tl != nil {
		t.Errorf("timeline of an empty window: %+v", tl)
	}
	in = syncWindow()
	in.Window.EndNs = in.Window.StartNs
	if tl := Timeline(in); tl != nil {
		t.Errorf("timeline of a window without length: %+v", tl)
	}
}

// The finding lane's total is the exact union of its intervals: merging
// them to the drawing's columns widens each (b200_eager's caption said
// 80.4 ms of idle, more than the window's 75.8 ms without GPU work).
func TestUnionLen(t *testing.T) {
	for _, c := range []struct {
		ivs  []ival
		want int64
	}{
		{nil, 0},
		{[]ival{{a: 10, b: 20}, {a: 0, b: 5}}, 15},
		{[]ival{{a: 0, b: 10}, {a: 5, b: 15}, {a: 15, b: 16}, {a: 2, b: 3}}, 16},
	} {
		if got := unionLen(c.ivs); got != c.want {
			t.Errorf("unionLen(%v) = %d, want %d", c.ivs, got, c.want)
		}
	}
	// Many thin intervals drawn at a pixel's resolution: the merged spans
	// add up to more than the intervals, the total does not.
	var ivs []ival
	for i := int64(0); i < 100; i++ {
		ivs = append(ivs, ival{a: i * 1000, b: i*1000 + 10})
	}
	var drawn int64
	for _, s := range merge(ivs, 100_000, true) {
		drawn += s.DurNs
	}
	if got := unionLen(ivs); got != 1000 || drawn <= got {
		t.Errorf("union %d (want 1000), drawn %d (want more)", got, drawn)
	}
}
