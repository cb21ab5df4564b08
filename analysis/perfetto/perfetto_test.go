package perfetto

import (
	"bytes"
	"compress/gzip"
	"encoding/json"
	"io"
	"slices"
	"sort"
	"strings"
	"testing"

	"github.com/tracebook/tracebook/analysis/evidence"
	"github.com/tracebook/tracebook/analysis/findings"
	"github.com/tracebook/tracebook/analysis/report"
	"github.com/tracebook/tracebook/analysis/table"
	"github.com/tracebook/tracebook/analysis/trace"
)

// rowsTable builds rows in the shape of sql/perfetto.sql.
type rowsTable struct{ t *table.Table }

var columns = []string{"row_kind", "pid", "tid", "kind", "api", "cat", "name", "label", "sort_index", "ts_ns", "dur_ns",
	"correlation", "external_id", "stream", "device", "bytes", "graph_id", "class", "total", "python", "python_kept",
	"sync", "src_kind", "dst_kind", "copy_bytes"}

func newRows(t0 int64, total, python int64, pythonKept bool) *rowsTable {
	t := &table.Table{Name: "perfetto"}
	for _, c := range columns {
		t.Columns = append(t.Columns, table.Column{Name: c})
	}
	r := &rowsTable{t: t}
	r.add(map[string]any{"row_kind": "origin", "ts_ns": t0, "total": total, "python": python, "python_kept": pythonKept})
	return r
}

func (r *rowsTable) add(v map[string]any) {
	row := make([]any, len(columns))
	for i, c := range columns {
		row[i] = v[c]
	}
	r.t.Rows = append(r.t.Rows, row)
}

func (r *rowsTable) event(pid, tid, kind, api, cat, name string, ts, dur int64, corr any) {
	r.add(map[string]any{"row_kind": "event", "pid": pid, "tid": tid, "kind": kind, "api": api, "cat": cat, "name": name,
		"ts_ns": ts, "dur_ns": dur, "correlation": corr})
}

// blocking rates the event added last as the preset rates a blocking call.
func (r *rowsTable) blocking() { r.t.Rows[len(r.t.Rows)-1][slices.Index(columns, "sync")] = "blocking" }

// syncWindow is a window of two steps around a planted .item() sync: the
// call blocks 5 ms, the GPU drains inside it and stays idle 2.398 ms.
func syncWindow() Input {
	const t0 = int64(1_700_000_000_000_000) // ns
	r := newRows(t0, 7, 0, true)
	r.event("100", "100", "annotation", "", "user_annotation", "ProfilerStep#2", t0+1_000_000, 13_000_000, nil)
	r.event("100", "100", "cpu_op", "", "cpu_op", "aten::item", t0+1_300_000, 5_200_000, nil)
	r.event("100", "100", "runtime", "launch", "cuda_runtime", "cudaLaunchKernel", t0+1_010_000, 5_000, int64(7))
	r.event("0", "7", "kernel", "", "kernel", "gemm", t0+1_100_000, 4_002_500, int64(7))
	r.event("100", "100", "runtime", "sync", "cuda_runtime", "cudaStreamSynchronize", t0+1_330_000, 5_000_000, nil)
	r.blocking()
	r.event("100", "100", "runtime", "launch", "cuda_runtime", "cudaLaunchKernel", t0+7_410_000, 5_000, int64(8))
	r.event("0", "7", "kernel", "", "kernel", "gemm", t0+7_500_000, 500_000, int64(8))
	r.add(map[string]any{"row_kind": "gap", "kind": "host_wait", "ts_ns": t0 + 5_102_500, "dur_ns": int64(2_397_500)})
	r.add(map[string]any{"row_kind": "process", "pid": "100", "name": "python3", "label": "CPU", "sort_index": int64(100)})
	r.add(map[string]any{"row_kind": "thread", "pid": "0", "tid": "7", "name": "stream 7", "sort_index": int64(7)})
	w := report.Window{N: 1, File: report.FileName(1, "sync_bound_loop"), Rule: "sync_bound_loop", Trace: "t", Rank: 3,
		Step: 2, FirstStep: 2, LastStep: 3, StartNs: 1_000_000, EndNs: 20_000_000, FocusStartNs: 1_000_000, FocusEndNs: 14_000_000,
		Basis: "step 2 has the largest GPU gap", Placed: true}
	f := evidence.Finding{Rule: "sync_bound_loop", Severity: "critical", Status: "confirmed",
		Title: "Host syncs drain the GPU", Observation: "1 blocking sync call blocked the host for 5.0 ms (trace t, rank 3).",
		Fix: "Keep the scalar on the GPU.", Snippet: "total += loss.detach()", Trace: "t", Rank: 3,
		Evidence: []evidence.Ref{{Preset: "sync", Where: map[string]string{"rank": "3"}}}}
	return Input{Window: w, Finding: f, Rows: r.t}
}

type jsonTrace struct {
	TraceEvents []struct {
		Ph   string          `json:"ph"`
		Cat  string          `json:"cat"`
		Name string          `json:"name"`
		Pid  json.Number     `json:"pid"`
		Tid  json.Number     `json:"tid"`
		Ts   json.Number     `json:"ts"`
		Dur  json.Number     `json:"dur"`
		ID   json.Number     `json:"id"`
		Args json.RawMessage `json:"args"`
	} `json:"traceEvents"`
	Tracebook struct {
		Note   string `json:"note"`
		Capped bool   `json:"capped"`
		Kept   int    `json:"events_kept"`
		InWin  int    `json:"events_in_window"`
	} `json:"tracebook"`
}

func decode(t *testing.T, data []byte) jsonTrace {
	t.Helper()
	var jt jsonTrace
	dec := json.NewDecoder(bytes.NewReader(data))
	dec.UseNumber()
	if err := dec.Decode(&jt); err != nil {
		t.Fatalf("the export is not valid JSON: %v\n%s", err, data)
	}
	return jt
}

// parseBack loads the export with tracebook's own importer.
func parseBack(t *testing.T, data []byte) ([]trace.Event, *trace.FileInfo) {
	t.Helper()
	var evs []trace.Event
	info, err := trace.Parse(bytes.NewReader(data), "export.json", trace.LoadOptions{}, func(e *trace.Event) error {
		c := *e
		c.Args = append([]byte(nil), e.Args...)
		evs = append(evs, c)
		return nil
	})
	if err != nil {
		t.Fatalf("tracebook's importer rejects the export: %v", err)
	}
	return evs, info
}

func TestBuildSyncWindow(t *testing.T) {
	in := syncWindow()
	data, st := Build(in, Options{})
	jt := decode(t, data)
	if st.Kept != 7 || st.Capped() || jt.Tracebook.Capped || !strings.HasPrefix(jt.Tracebook.Note, "all 7 events") {
		t.Errorf("stats %+v, note %q", st, jt.Tracebook.Note)
	}
	evs, info := parseBack(t, data)
	if !info.HasDistributedRank || info.DistributedRank != 3 {
		t.Errorf("the export does not carry its rank: %+v", info)
	}
	const t0 = int64(1_700_000_000_000_000)
	var finding, blocked, idle *trace.Event
	flows := 0
	for i := range evs {
		e := &evs[i]
		switch {
		case e.Cat == "tracebook" && e.Name == "Host syncs drain the GPU":
			finding = e
		case e.Cat == "tracebook" && e.Name == "host blocked: cudaStreamSynchronize":
			blocked = e
		case e.Cat == "tracebook" && e.Name == "GPU idle after cudaStreamSynchronize":
			idle = e
		case e.Ph == "s" || e.Ph == "f":
			flows++
		}
	}
	if finding == nil || blocked == nil || idle == nil {
		t.Fatalf("the finding track lacks a slice: finding %v, blocked %v, idle %v", finding != nil, blocked != nil, idle != nil)
	}
	// The finding slice is the worst step; the flagged intervals are the
	// sync call and the gap it opened, exactly; the finding covers both.
	if finding.TsNs != t0+1_000_000 || finding.DurNs != 13_000_000 {
		t.Errorf("finding slice %d+%d, want the step %d+%d", finding.TsNs, finding.DurNs, t0+1_000_000, 13_000_000)
	}
	if blocked.TsNs != t0+1_330_000 || blocked.DurNs != 5_000_000 {
		t.Errorf("flagged sync %d+%d", blocked.TsNs, blocked.DurNs)
	}
	if idle.TsNs != t0+5_102_500 || idle.DurNs != 2_397_500 {
		t.Errorf("flagged gap %d+%d, want %d+%d (exact to the ns)", idle.TsNs, idle.DurNs, t0+5_102_500, 2_397_500)
	}
	for _, m := range []*trace.Event{blocked, idle} {
		if m.TsNs < finding.TsNs || m.TsNs+m.DurNs > finding.TsNs+finding.DurNs {
			t.Errorf("the finding slice does not cover the flagged interval %s", m.Name)
		}
	}
	if finding.Pid == blocked.Pid && finding.Tid == blocked.Tid {
		t.Error("the flagged intervals share the finding's thread")
	}
	if flows != 4 {
		t.Errorf("%d flow events, want 2 launches x (s + f)", flows)
	}
	// The finding's args hold the observation, the fix and the evidence.
	var args map[string]any
	for _, e := range jt.TraceEvents {
		if e.Name == "Host syncs drain the GPU" {
			json.Unmarshal(e.Args, &args)
		}
	}
	for _, k := range []string{"observation", "fix", "snippet", "window", "why this window", "evidence", "export"} {
		if s, _ := args[k].(string); s == "" {
			t.Errorf("finding args lack %q: %v", k, args)
		}
	}
	// The findings process is named, and the trace's names come along.
	names := map[string]bool{}
	for _, e := range jt.TraceEvents {
		if e.Ph == "M" {
			var a struct{ Name string }
			json.Unmarshal(e.Args, &a)
			names[e.Name+"="+a.Name] = true
		}
	}
	for _, want := range []string{"process_name=tracebook findings", "process_name=python3", "thread_name=stream 7"} {
		if !names[want] {
			t.Errorf("metadata lacks %s: %v", want, names)
		}
	}
}

// Names from the trace are escaped: the export stays valid JSON and the
// importer reads the names back as they were.
func TestBuildEscapes(t *testing.T) {
	hostile := []string{
		`quote " and backslash \ end`,
		"newline\nand\ttab and \x01 control",
		`</script><script>alert(1)</script>`,
		"line\u2028separator and emoji \U0001F600",
		"ampersand & <b>",
	}
	in := syncWindow()
	r := &rowsTable{t: in.Rows}
	for i, name := range hostile {
		r.event("100", "100", "cpu_op", "", "cpu_op", name, 1_700_000_000_000_000+int64(2_000_000+i), 10, nil)
	}
	r.event("100", "100", "cpu_op", "", "cpu_op", "bad utf8 \xff\xfe", 1_700_000_000_000_000+3_000_000, 10, nil)
	in.Finding.Observation = `observation with "quotes" and </script>`
	data, _ := Build(in, Options{})
	if bytes.Contains(data, []byte("</script")) || bytes.Contains(data, []byte("<b>")) {
		t.Error("a name reached the JSON with < or > unescaped")
	}
	if !json.Valid(data) {
		t.Fatalf("not valid JSON:\n%s", data)
	}
	evs, _ := parseBack(t, data)
	got := map[string]bool{}
	for _, e := range evs {
		got[e.Name] = true
	}
	for _, name := range hostile {
		if !got[name] {
			t.Errorf("name %q did not come back", name)
		}
	}
	if !got["bad utf8 \ufffd\ufffd"] {
		t.Error("invalid UTF-8 is not replaced by U+FFFD")
	}
}

func TestBuildCapKeepsLongest(t *testing.T) {
	in := syncWindow()
	data, st := Build(in, Options{MaxEvents: 3, Why: "for the test"})
	jt := decode(t, data)
	if st.Kept != 3 || !st.Capped() || !jt.Tracebook.Capped || !strings.Contains(jt.Tracebook.Note, "capped: 3 of the 7 events") ||
		!strings.Contains(jt.Tracebook.Note, "for the test") {
		t.Errorf("stats %+v, note %q", st, jt.Tracebook.Note)
	}
	var kept []string
	for _, e := range jt.TraceEvents {
		if e.Ph == "X" && e.Cat != "tracebook" {
			kept = append(kept, e.Name)
		}
	}
	// The three longest: the step (13 ms), aten::item (5.2 ms), the sync (5 ms).
	if strings.Join(kept, ",") != "ProfilerStep#2,aten::item,cudaStreamSynchronize" {
		t.Errorf("kept %v", kept)
	}
	// The flagged intervals do not depend on the cap.
	if st.Marks != 2 {
		t.Errorf("%d flagged intervals, want 2", st.Marks)
	}
}

func TestFilesBudget(t *testing.T) {
	in := syncWindow()
	r := &rowsTable{t: in.Rows}
	for i := 0; i < 5000; i++ {
		r.event("0", "7", "kernel", "", "kernel", "kernel_"+strings.Repeat("x", i%50), 1_700_000_000_000_000+int64(i)*997, int64(100+i%300), int64(10000+i))
	}
	const budget = 20 << 10
	files := Files([]Input{in}, budget)
	if len(files) != 1 || files[0].Name != "finding-1-sync_bound_loop.json" {
		t.Fatalf("files %v", files)
	}
	if n := len(gzipBytes(files[0].JSON)); n > budget {
		t.Errorf("file is %d bytes gzip, budget %d", n, budget)
	}
	jt := decode(t, files[0].JSON)
	if !jt.Tracebook.Capped || !strings.Contains(jt.Tracebook.Note, "size budget") {
		t.Errorf("a file cut to its budget must say so: %q", jt.Tracebook.Note)
	}
	if all := Files([]Input{in}, 0); len(gzipBytes(all[0].JSON)) <= budget {
		t.Error("without a budget the file should hold every event")
	}
}

func TestMicros(t *testing.T) {
	tests := []struct {
		ns   int64
		want string
	}{
		{0, "0"}, {1000, "1"}, {1, "0.001"}, {1_500, "1.5"}, {1_695_835_585_862_981_500, "1695835585862981.5"},
		{-2_500, "-2.5"}, {123_456_789, "123456.789"},
	}
	for _, tc := range tests {
		if got := Micros(tc.ns); got != tc.want {
			t.Errorf("Micros(%d) = %q, want %q", tc.ns, got, tc.want)
		}
	}
}

// A pid or tid that is not a number gets a number of its own, named after
// its text; the finding's process takes a pid no event uses.
func TestBuildTextIDs(t *testing.T) {
	in := syncWindow()
	r := &rowsTable{t: in.Rows}
	r.event("Spans", "stream 9", "gpu_annotation", "", "gpu_user_annotation", "span", 1_700_000_000_000_000+1_200_000, 1_000, nil)
	data, _ := Build(in, Options{})
	jt := decode(t, data)
	pids := map[string]bool{}
	named := map[string]bool{}
	for _, e := range jt.TraceEvents {
		if e.Ph == "M" {
			var a struct{ Name string }
			json.Unmarshal(e.Args, &a)
			named[a.Name] = true
		}
		if _, err := e.Pid.Int64(); e.Pid != "" && err != nil {
			t.Errorf("pid %q is not a number", e.Pid)
		}
		if e.Ph == "X" && e.Cat != "tracebook" {
			pids[string(e.Pid)] = true
		}
	}
	if !named["Spans"] || !named["stream 9"] {
		t.Errorf("text pid/tid not named: %v", named)
	}
	for _, e := range jt.TraceEvents {
		if e.Cat == "tracebook" && pids[string(e.Pid)] {
			t.Errorf("the findings process shares pid %s with the trace", e.Pid)
		}
	}
}

// Two findings on one window share the trace's events: the files differ in
// their heads only, and the budget counts the shared body once.
func TestFilesShareWindow(t *testing.T) {
	a := syncWindow()
	r := &rowsTable{t: a.Rows}
	for i := 0; i < 3000; i++ {
		r.event("0", "7", "kernel", "", "kernel", "kernel_"+strings.Repeat("y", i%40), 1_700_000_000_000_000+int64(i)*1_013, int64(100+i%700), int64(20000+i))
	}
	b := a
	b.Window.N, b.Window.Rule, b.Window.File = 2, "host_bound_idle", report.FileName(2, "host_bound_idle")
	b.Finding.Rule, b.Finding.Title = "host_bound_idle", "The GPU waits for the CPU"
	one := len(gzipBytes(Files([]Input{a}, 0)[0].JSON))
	files := Files([]Input{a, b}, one+one/4) // room for one body and two heads, not for two bodies
	if len(files) != 2 || files[0].Split <= 0 || files[1].Split <= 0 {
		t.Fatalf("files %d, splits %d %d", len(files), files[0].Split, files[1].Split)
	}
	if !bytes.Equal(files[0].JSON[files[0].Split:], files[1].JSON[files[1].Split:]) {
		t.Error("two findings on one window do not share their body")
	}
	for _, f := range files {
		jt := decode(t, f.JSON)
		if jt.Tracebook.Capped {
			t.Errorf("%s was cut although the shared body fits: %s", f.Name, jt.Tracebook.Note)
		}
		parseBack(t, f.JSON)
	}
	if bytes.Equal(files[0].JSON[:files[0].Split], files[1].JSON[:files[1].Split]) {
		t.Error("the two heads are the same")
	}
	// The parts the budget measured come with the files, compressed: the
	// page stores them as they are.
	for i, f := range files {
		for k, want := range [][]byte{f.JSON[:f.Split], f.JSON[f.Split:]} {
			if f.Gz[k] == nil {
				if k == 0 || i == 0 {
					t.Errorf("%s: part %d was measured but is not kept compressed", f.Name, k)
				}
				continue
			}
			zr, err := gzip.NewReader(bytes.NewReader(f.Gz[k]))
			if err != nil {
				t.Fatal(err)
			}
			got, err := io.ReadAll(zr)
			if err != nil || !bytes.Equal(got, want) {
				t.Errorf("%s: part %d compressed is not its JSON (%v)", f.Name, k, err)
			}
		}
	}
	if files := Files([]Input{a}, 0); files[0].Gz[0] != nil || files[0].Gz[1] != nil {
		t.Error("a file built without a budget carries compressed parts")
	}
}

// TestFilesShareWindowAsBuild: findings on one window share its rows and
// body in Files, and each file is still byte for byte what Build writes
// for its finding alone (its own head: number, rule, flagged intervals).
func TestFilesShareWindowAsBuild(t *testing.T) {
	a := syncWindow()
	b := a
	b.Window.N, b.Window.Rule, b.Window.File = 2, "host_bound_idle", report.FileName(2, "host_bound_idle")
	b.Finding.Rule, b.Finding.Title = "host_bound_idle", "The GPU waits for the CPU"
	c := a
	c.Window.N, c.Window.StartNs = 3, a.Window.StartNs+1 // another window of the same rows
	files := Files([]Input{a, b, c}, 0)
	for i, in := range []Input{a, b, c} {
		want, _ := Build(in, Options{})
		if !bytes.Equal(files[i].JSON, want) {
			t.Errorf("file %d (%s) differs from its finding's file built alone", i, in.Window.Rule)
		}
	}
	if bytes.Equal(files[0].JSON[:files[0].Split], files[1].JSON[:files[1].Split]) {
		t.Error("the two findings of one window have the same head")
	}
}

func TestPageBudget(t *testing.T) {
	tests := []struct{ page, want int }{
		{100_000, ReportBudget},                             // a small report: the whole budget
		{2_900_000, (PageLimit - 2_900_000 - 4096) * 4 / 5}, // what is left under the limit
		{2_999_000, 8 << 10},                                // no room left: the floor
	}
	for _, tc := range tests {
		if got := PageBudget(tc.page); got != tc.want {
			t.Errorf("PageBudget(%d) = %d, want %d", tc.page, got, tc.want)
		}
	}
}

// TestMarksFollowRuleRows: the intervals a finding's file flags are the
// events and gaps its rule's row picks (findings.Rules), with the linked
// intervals the row asks for; a rule without marks flags nothing.
func TestMarksFollowRuleRows(t *testing.T) {
	ev := func(kind, api, name, class string, ts, dur, corr int64) event {
		e := event{rowKind: "event", kind: kind, api: api, name: name, class: class, ts: ts, dur: dur, corr: corr}
		if corr != 0 {
			e.has |= hasCorr
		}
		return e
	}
	// rated is an event with the preset's sync rating and copy kinds.
	rated := func(e event, sync, src, dst string) event {
		e.sync, e.srcKind, e.dstKind = sync, src, dst
		return e
	}
	events := []event{
		rated(ev("runtime", "sync", "cudaStreamSynchronize", "", 100, 50, 0), "blocking", "", ""),
		rated(ev("runtime", "sync", "cudaStreamWaitEvent", "", 200, 5, 0), "stream", "", ""),
		rated(ev("runtime", "memcpy", "hipMemcpyWithStream", "", 300, 20, 0), "blocking", "", ""), // synchronous: no Async in its name
		rated(ev("runtime", "memcpy", "cudaMemcpyAsync", "", 400, 30, 11), "blocking", "Pageable", "Device"),
		rated(ev("gpu_memcpy", "", "Memcpy HtoD (Pageable -> Device)", "MEM", 405, 20, 11), "", "Pageable", "Device"),
		rated(ev("runtime", "memcpy", "cudaMemcpyAsync", "", 500, 10, 12), "", "Pinned", "Device"),
		rated(ev("gpu_memcpy", "", "Memcpy HtoD (Pinned -> Device)", "MEM", 505, 5, 12), "", "Pinned", "Device"),
		ev("kernel", "", "volta_sgemm_128x64_nn", "COMP", 600, 80, 13),
		ev("kernel", "", "ncclDevKernel_AllReduce_Sum_bf16_RING_LL(ncclDevComm*, unsigned long, ncclWork*)", "COMM", 700, 90, 14),
		ev("cpu_op", "", "enumerate(DataLoader)#_SingleProcessDataLoaderIter.__next__", "", 800, 40, 0),
		ev("kernel", "", "void at::native::vectorized_elementwise_kernel<4, at::native::AddFunctor<float>>(int)", "COMP", 900, 2000, 15),
		ev("kernel", "", "void at::native::vectorized_elementwise_kernel<4, at::native::AddFunctor<float>>(int)", "COMP", 3000, 8000, 16),
		ev("kernel", "", "triton_poi_fused_add_0", "COMP", 12000, 3, 17),
		ev("gpu_memset", "", "Memset (Device)", "MEM", 12100, 2, 18),
	}
	// The Subjects the report computes for the rules whose marks depend on
	// the finding: the slow kernel's instances from 4000 ns, and the tiny
	// kernel names of the rank.
	subjects := map[string]*findings.Subject{
		"kernel_slow_instances": {Names: []string{"void at::native::vectorized_elementwise_kernel<4, at::native::AddFunctor<float>>(int)"}, FloorNs: 4000},
		"short_kernel_storm":    {Names: []string{"Memset (Device)", "triton_poi_fused_add_0"}},
	}
	gaps := []event{{rowKind: "gap", kind: "host_wait", ts: 120, dur: 60}, {rowKind: "gap", kind: "other", ts: 900, dur: 10}}
	want := map[string][]string{
		"sync_bound_loop": {"host blocked: cudaStreamSynchronize", "GPU idle after cudaStreamSynchronize", "host blocked: hipMemcpyWithStream",
			"host blocked: cudaMemcpyAsync"},
		"pageable_copies":      {"pageable copy: Memcpy HtoD (Pageable -> Device)", "host blocked: cudaMemcpyAsync (pageable copy)"},
		"host_bound_idle":      {"GPU waits for the host (host_wait)"},
		"launch_bound":         {"GPU idle between launches (host_wait)"},
		"comm_not_overlapped":  {"communication: ncclDevKernel_AllReduce_Sum_bf16_RING_LL(ncclDevComm*, unsigned long, ncclWork*)"},
		"dataloader_share":     {"DataLoader: enumerate(DataLoader)#_SingleProcessDataLoaderIter.__next__"},
		"fp32_no_tensor_cores": {"fp32 SIMT: volta_sgemm_128x64_nn"},
		"rank_straggler":       nil,
		"elementwise_dominated": {"eager elementwise: void at::native::vectorized_elementwise_kernel<4, at::native::AddFunctor<float>>(int)",
			"eager elementwise: void at::native::vectorized_elementwise_kernel<4, at::native::AddFunctor<float>>(int)"},
		"kernel_slow_instances": {"slow instance: void at::native::vectorized_elementwise_kernel<4, at::native::AddFunctor<float>>(int)"},
		"short_kernel_storm":    {"tiny kernel: triton_poi_fused_add_0"},
		"memory_peak":           nil,
		"no_such_rule":          nil,
	}
	for rule, names := range want {
		var got []string
		for _, m := range marks(report.Window{Rule: rule, Subject: subjects[rule]}, events, gaps) {
			got = append(got, m.name)
		}
		sort.Strings(got)
		sort.Strings(names)
		if strings.Join(got, "|") != strings.Join(names, "|") {
			t.Errorf("%s flags %q, want %q", rule, got, names)
		}
	}
}

// A gap that opens inside a blocking call but ends at work queued before it
// (not host_wait) is not the call's: the sync area does not count it, and
// the finding track does not flag it (trace_diff_test_v100).
// A gap longer than the sync call that opened it is flagged as the
// call's only up to the call's duration, as the sync area counts it: the
// rest is the host's own work after the call.
func TestSyncGapFlaggedUpToCall(t *testing.T) {
	const t0 = int64(1_700_000_000_000_000)
	in := syncWindow()
	ts, dur := in.Rows.Col("ts_ns"), in.Rows.Col("dur_ns")
	for _, row := range in.Rows.Rows {
		if row[0] == "gap" {
			row[ts], row[dur] = t0+6_000_000, int64(9_000_000) // from 0.33 ms before the call's end
		}
	}
	data, _ := Build(in, Options{})
	evs, _ := parseBack(t, data)
	found := false
	for _, e := range evs {
		if e.Cat == "tracebook" && e.Name == "GPU idle after cudaStreamSynchronize" {
			found = true
			if e.TsNs != t0+6_000_000 || e.DurNs != 5_000_000 {
				t.Errorf("flagged gap %d+%d, want %d+%d: the gap up to the call's 5 ms", e.TsNs, e.DurNs, t0+6_000_000, 5_000_000)
			}
		}
	}
	if !found {
		t.Error("the gap the call opened is not flagged")
	}
}

func TestSyncWindowQueuedGapNotFlagged(t *testing.T) {
	in := syncWindow()
	kind := in.Rows.Col("kind")
	for _, row := range in.Rows.Rows {
		if row[0] == "gap" {
			row[kind] = "other"
		}
	}
	data, _ := Build(in, Options{})
	evs, _ := parseBack(t, data)
	var blocked bool
	for _, e := range evs {
		if e.Cat == "tracebook" && e.Name == "GPU idle after cudaStreamSynchronize" {
			t.Errorf("a gap ended by queued work is flagged as the sync's: %+v", e)
		}
		blocked = blocked || (e.Cat == "tracebook" && e.Name == "host blocked: cudaStreamSynchronize")
	}
	if !blocked {
		t.Error("the blocking call itself is no longer flagged")
	}
}
