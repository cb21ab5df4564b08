package trace

import (
	"bytes"
	"compress/gzip"
	"crypto/sha256"
	"encoding/hex"
	"errors"
	"os"
	"path/filepath"
	"slices"
	"strings"
	"testing"
)

// collect parses s and returns copies of the events and the FileInfo.
func collect(t testing.TB, s string, opts LoadOptions) ([]Event, *FileInfo, error) {
	t.Helper()
	var evs []Event
	fi, err := Parse(strings.NewReader(s), "test.json", opts, func(e *Event) error {
		c := *e
		c.Args = append([]byte(nil), e.Args...)
		if e.Args == nil {
			c.Args = nil
		}
		evs = append(evs, c)
		return nil
	})
	return evs, fi, err
}

func one(t *testing.T, event string) Event {
	t.Helper()
	evs, _, err := collect(t, `{"traceEvents":[`+event+`]}`, LoadOptions{})
	if err != nil {
		t.Fatalf("parse %s: %v", event, err)
	}
	if len(evs) != 1 {
		t.Fatalf("parse %s: %d events, want 1", event, len(evs))
	}
	return evs[0]
}

func TestScanner(t *testing.T) {
	tests := []struct {
		name  string
		event string
		check func(e Event) bool
	}{
		{"escapes in name", `{"ph":"X","name":"a\"b\\c\/d\n\t\u0041","ts":1}`,
			func(e Event) bool { return e.Name == "a\"b\\c/d\n\tA" }},
		{"unicode", `{"ph":"X","name":"héllo 日本 \u00e9\ud83d\ude00","ts":1}`,
			func(e Event) bool { return e.Name == "héllo 日本 é😀" }},
		{"lone surrogate", `{"ph":"X","name":"a\ud800b","ts":1}`,
			func(e Event) bool { return e.Name == "a\uFFFDb" }},
		{"invalid utf-8 made valid", "{\"ph\":\"X\",\"name\":\"a\xffb\",\"ts\":1}",
			func(e Event) bool { return e.Name == "a\uFFFDb" }},
		{"lone low surrogate", `{"ph":"X","name":"a\udc00b","ts":1}`,
			func(e Event) bool { return e.Name == "a\uFFFDb" }},
		{"high surrogate before a \\u of no low half", `{"ph":"X","name":"\ud800\u0041","cat":"\udc00\ud800","ts":1}`,
			func(e Event) bool { return e.Name == "\uFFFDA" && e.Cat == "\uFFFD\uFFFD" }},
		{"escapes and invalid utf-8: one U+FFFD a run", "{\"ph\":\"X\",\"name\":\"a\\n\xff\xfeb\",\"ts\":1}",
			func(e Event) bool { return e.Name == "a\n\uFFFDb" }},
		{"escaped ts and flow id", `{"ph":"f","id":"0x1\u0030","cat":"async","ts":"\u0031\u0032"}`,
			func(e Event) bool { return e.FlowID == 16 && e.TsNs == 12000 }},
		{"exponent ts", `{"ph":"X","name":"n","ts":1.5e3,"dur":2E-1}`,
			func(e Event) bool { return e.TsNs == 1500000 && e.DurNs == 200 }},
		{"string ts ns resolution", `{"ph":"X","ts":"1682725898236567.123","dur":"1.0005"}`,
			func(e Event) bool { return e.TsNs == 1682725898236567123 && e.DurNs == 1001 }},
		{"numeric pid/tid and string pid", `{"ph":"X","pid":"stream 7","tid":-12,"ts":0}`,
			func(e Event) bool { return e.Pid == "stream 7" && e.Tid == "-12" }},
		{"pid written as float kept as written", `{"ph":"X","pid":1.0,"tid":2}`,
			func(e Event) bool { return e.Pid == "1.0" && e.Tid == "2" }},
		{"typed args", `{"ph":"X","cat":"kernel","name":"k","ts":1,"dur":2,"args":{"correlation":7,"External id":8,"stream":7,"device":0,"grid":[ 64, 1, 1 ],"block":[128,1,1],"graph id":3,"bytes":4096,"memory bandwidth (GB/s)":1.5}}`,
			func(e Event) bool {
				return e.Correlation == 7 && e.ExternalID == 8 && e.Stream == 7 && e.Has&HasDevice != 0 && e.Grid == "[64,1,1]" &&
					e.Block == "[128,1,1]" && e.GraphID == 3 && e.Bytes == 4096 && e.MemBWGBps == 1.5 && e.Args == nil && e.Kind == KindKernel
			}},
		{"2021 lowercase external id", `{"ph":"X","cat":"Runtime","name":"cudaLaunchKernel","args":{"external id":5,"cbid":211}}`,
			func(e Event) bool {
				return e.ExternalID == 5 && string(e.Args) == `{"cbid":211}` && e.Kind == KindRuntime && e.API == APILaunch
			}},
		{"python ids and seq", `{"ph":"X","cat":"python_function","args":{"Python id":1,"Python parent id":0,"Ev Idx":9,"Sequence number":4,"Fwd thread id":2}}`,
			func(e Event) bool {
				return e.PythonID == 1 && e.Has&HasPythonParentID != 0 && e.EvIdx == 9 && e.SeqNo == 4 && e.FwdTid == 2
			}},
		{"bytes as a string stays in args", `{"ph":"X","cat":"cuda_runtime","name":"hipMemcpyAsync","args":{"bytes":"13248"}}`,
			func(e Event) bool {
				return e.Has&HasBytes == 0 && string(e.Args) == `{"bytes":"13248"}` && e.API == APIMemcpy
			}},
		{"bytes on a cpu event stays in args", `{"ph":"X","cat":"cpu_op","args":{"bytes":12}}`,
			func(e Event) bool { return e.Has&HasBytes == 0 && string(e.Args) == `{"bytes":12}` }},
		{"bytes before cat", `{"ph":"X","args":{"bytes":12},"cat":"gpu_memcpy"}`,
			func(e Event) bool { return e.Bytes == 12 && e.Args == nil }},
		{"float correlation stays in args", `{"ph":"X","args":{"correlation":1.5}}`,
			func(e Event) bool { return e.Has&HasCorrelation == 0 && string(e.Args) == `{"correlation":1.5}` }},
		{"nested args compacted", `{"ph":"X","args":{ "Input Dims" : [[1, 2], []], "Concrete Inputs": ["", "1e-05"], "o": {"a": {"b": [true, false, null]}}, "nan": NaN, "inf": -Infinity }}`,
			func(e Event) bool {
				return string(e.Args) == `{"Input Dims":[[1,2],[]],"Concrete Inputs":["","1e-05"],"o":{"a":{"b":[true,false,null]}},"nan":null,"inf":null}`
			}},
		{"escaped arg key and value kept escaped", `{"ph":"X","args":{"k\"ey":"v\\u0041\n"}}`,
			func(e Event) bool { return string(e.Args) == `{"k\"ey":"v\\u0041\n"}` }},
		{"control character escaped in args", "{\"ph\":\"X\",\"args\":{\"k\":\"a\x01b\"}}",
			func(e Event) bool { return string(e.Args) == `{"k":"a\u0001b"}` }},
		{"control character and invalid utf-8 in an arg key", "{\"ph\":\"X\",\"args\":{\"\v\":[],\"a\xffb\\n\":1}}",
			func(e Event) bool { return string(e.Args) == "{\"\\u000b\":[],\"a\uFFFDb\\n\":1}" }},
		{"flow", `{"ph":"s","id":538860,"pid":1,"tid":1,"ts":1,"cat":"ac2g","name":"ac2g","bp":"e"}`,
			func(e Event) bool {
				return e.Kind == KindFlow && e.FlowID == 538860 && e.BP == "e" && e.Has&HasFlowID != 0
			}},
		{"flow with string id", `{"ph":"f","id":"0x10","cat":"async"}`,
			func(e Event) bool { return e.FlowID == 16 }},
		{"flow with opaque string id", `{"ph":"t","id":"abc","cat":"fwdbwd"}`,
			func(e Event) bool { return e.FlowID == FlowIDOf("abc") }},
		{"instant scope", `{"ph":"i","s":"t","name":"Iteration Start: PyTorch Profiler","ts":5}`,
			func(e Event) bool { return e.Kind == KindInstant && e.Scope == "t" && e.Has&HasDur == 0 }},
		{"counter", `{"ph":"C","name":"mem","ts":5,"args":{"v":1}}`,
			func(e Event) bool { return e.Kind == KindCounter && string(e.Args) == `{"v":1}` }},
		{"unknown keys skipped", `{"ph":"X","tts":5,"cname":"good","stack":[1,{"a":2}],"name":"x"}`,
			func(e Event) bool { return e.Name == "x" }},
		{"null ts means no ts", `{"ph":"X","ts":null}`,
			func(e Event) bool { return e.Has&HasTs == 0 }},
		{"empty event", `{}`, func(e Event) bool { return e.Ph == "" && e.Kind == KindOther }},
	}
	for _, tc := range tests {
		t.Run(tc.name, func(t *testing.T) {
			e := one(t, tc.event)
			if !tc.check(e) {
				t.Errorf("parse %s = %+v (args %s)", tc.event, e, e.Args)
			}
		})
	}
}

func TestTimeNs(t *testing.T) {
	tests := []struct {
		in       string
		want     int64
		ok, over bool
	}{
		{"0", 0, true, false},
		{"1", 1000, true, false},
		{"6520488433299.504", 6520488433299504, true, false},
		{"1682725898236567.123", 1682725898236567123, true, false},
		{"1.0004", 1000, true, false},
		{"1.0005", 1001, true, false},
		{"1.00049999", 1000, true, false},
		{"0.0005", 1, true, false},
		{"0.00049", 0, true, false},
		{"1.9999", 2000, true, false},
		{"1e3", 1000000, true, false},
		{"1.5E-3", 2, true, false},
		{"2.5e-4", 0, true, false},
		{"1234.5678e1", 12345678, true, false},
		{"-3.2", -3200, true, false},
		{"1e-9999", 0, true, false},
		{"9223372036854775", 9223372036854775000, true, false},
		{"9223372036854776", 0, true, true},
		{"1e20", 0, true, true},
		{"1e99999", 0, true, true},
		{"", 0, false, false},
		{"abc", 0, false, false},
		{"1.2.3", 0, false, false},
		{"1e", 0, false, false},
		{"NaN", 0, false, false},
	}
	for _, tc := range tests {
		got, _, ok, over := timeNs([]byte(tc.in))
		if got != tc.want || ok != tc.ok || over != tc.over {
			t.Errorf("timeNs(%q) = %d, ok %v, overflow %v; want %d, %v, %v", tc.in, got, ok, over, tc.want, tc.ok, tc.over)
		}
	}
}

func TestKindAndAPI(t *testing.T) {
	kinds := []struct {
		ph, cat string
		want    Kind
	}{
		{"X", "kernel", KindKernel}, {"X", "Kernel", KindKernel},
		{"X", "gpu_memcpy", KindGPUMemcpy}, {"X", "Memcpy", KindGPUMemcpy},
		{"X", "gpu_memset", KindGPUMemset}, {"X", "Memset", KindGPUMemset},
		{"X", "cuda_sync", KindGPUSync}, {"X", "gpu_user_annotation", KindGPUAnnotation},
		{"X", "cpu_op", KindCPUOp}, {"X", "Operator", KindCPUOp},
		{"X", "user_annotation", KindAnnotation}, {"X", "python_function", KindPython},
		{"X", "cuda_runtime", KindRuntime}, {"X", "Runtime", KindRuntime}, {"X", "cuda_driver", KindDriver},
		{"i", "cpu_instant_event", KindInstant}, {"i", "", KindInstant}, {"I", "x", KindInstant},
		{"X", "cpu_instant_event", KindInstant},
		{"C", "", KindCounter},
		{"s", "ac2g", KindFlow}, {"f", "fwdbwd", KindFlow}, {"t", "async", KindFlow},
		{"s", "async_cpu_to_gpu", KindFlow}, {"f", "async_gpu", KindFlow},
		{"X", "overhead", KindOverhead}, {"X", "Trace", KindOther}, {"X", "", KindOther}, {"b", "mtia_other", KindOther},
		{"X", "mtia_ccp_events", KindKernel}, {"X", "mtia_runtime", KindRuntime}, {"b", "mtia_runtime", KindRuntime},
	}
	for _, tc := range kinds {
		if got := KindOf(tc.ph, tc.cat); got != tc.want {
			t.Errorf("KindOf(%q, %q) = %q, want %q", tc.ph, tc.cat, got, tc.want)
		}
	}
	apis := []struct {
		kind Kind
		name string
		want API
	}{
		{KindRuntime, "runFunction - job_prep_and_submit_for_execution", APILaunch},
		{KindRuntime, "cudaLaunchKernel", APILaunch}, {KindRuntime, "cudaLaunchKernelExC", APILaunch},
		{KindDriver, "cuLaunchKernel", APILaunch}, {KindDriver, "cuLaunchKernelEx", APILaunch},
		{KindRuntime, "hipLaunchKernel", APILaunch}, {KindRuntime, "hipExtModuleLaunchKernel", APILaunch},
		{KindRuntime, "hipModuleLaunchKernel", APILaunch},
		{KindRuntime, "cudaGraphLaunch", APIGraphLaunch}, {KindRuntime, "hipGraphLaunch", APIGraphLaunch},
		{KindRuntime, "cudaDeviceSynchronize", APISync}, {KindRuntime, "cudaStreamSynchronize", APISync},
		{KindRuntime, "cudaEventSynchronize", APISync}, {KindRuntime, "cudaStreamWaitEvent", APISync},
		{KindRuntime, "hipDeviceSynchronize", APISync}, {KindRuntime, "hipStreamSynchronize", APISync},
		{KindRuntime, "hipEventSynchronize", APISync}, {KindRuntime, "hipStreamWaitEvent", APISync},
		{KindRuntime, "cudaMemcpyAsync", APIMemcpy}, {KindRuntime, "cudaMemcpy", APIMemcpy},
		{KindRuntime, "hipMemcpyWithStream", APIMemcpy}, {KindRuntime, "cudaMemsetAsync", APIMemset},
		{KindRuntime, "hipMemsetAsync", APIMemset}, {KindRuntime, "cudaEventRecord", APIOther},
		{KindRuntime, "cudaEventQuery", APIOther},
		{KindCPUOp, "cudaLaunchKernel", APINone}, {KindKernel, "cudaMemcpy", APINone},
	}
	for _, tc := range apis {
		if got := APIOf(tc.kind, tc.name); got != tc.want {
			t.Errorf("APIOf(%q, %q) = %q, want %q", tc.kind, tc.name, got, tc.want)
		}
	}
}

func TestFileInfo(t *testing.T) {
	doc := `{"schemaVersion":1,"deviceProperties":[{"id":0,"name":"AMD Instinct MI300X","totalGlobalMem":205822885888}],
	"distributedInfo":{"backend":"nccl","rank":3,"world_size":8},"traceEvents":[
	{"ph":"M","name":"process_name","pid":5,"tid":0,"args":{"name":"[TP01-DP00-PP00-EP00] python3"}},
	{"ph":"M","name":"process_labels","pid":5,"tid":0,"args":{"labels":"CPU"}},
	{"ph":"M","name":"process_sort_index","pid":5,"tid":0,"args":{"sort_index":5}},
	{"ph":"M","name":"process_name","pid":6,"tid":0,"args":{"name":"[TP00-DP00-PP00-EP00] python3"}},
	{"ph":"M","name":"thread_name","pid":5,"tid":7,"args":{"name":"thread 7 (python3)"}},
	{"ph":"M","name":"thread_sort_index","pid":5,"tid":7,"args":{"sort_index":-3}},
	{"ph":"X","cat":"user_annotation","name":"execute_context_1(10)_generation_3(3)","pid":5,"tid":7,"ts":100,"dur":50},
	{"ph":"X","cat":"cuda_runtime","name":"hipGraphLaunch","pid":5,"tid":7,"ts":110,"dur":5},
	{"ph":"X","cat":"kernel","name":"k","pid":0,"tid":1,"ts":120.5,"dur":40},
	{"ph":"X","cat":"python_function","name":"vllm/worker.py(1): run","pid":5,"tid":7,"ts":90,"dur":1}
	],"traceName":"t.json","baseTimeNanoseconds":1700000000000000000,"vllm_version":"0.9.1"}`
	evs, fi, err := collect(t, doc, LoadOptions{NoPython: true})
	if err != nil {
		t.Fatal(err)
	}
	if len(evs) != 3 || fi.Events != 4 || fi.Skipped != 1 {
		t.Errorf("events: sink got %d, Events %d, Skipped %d; want 3, 4, 1", len(evs), fi.Events, fi.Skipped)
	}
	checks := []struct {
		what      string
		got, want any
	}{
		{"Format", fi.Format, "kineto"},
		{"SchemaVersion", fi.SchemaVersion, 1},
		{"BaseTimeNs", fi.BaseTimeNs, int64(1700000000000000000)},
		{"TraceName", fi.TraceName, "t.json"},
		{"DistributedRank", fi.DistributedRank, 3},
		{"WorldSize", fi.WorldSize, 8},
		{"GPUModel", fi.GPUModel, "AMD Instinct MI300X"},
		{"GPUTotalMem", fi.GPUTotalMem, int64(205822885888)},
		{"VLLMVersion", fi.VLLMVersion, "0.9.1"},
		{"Producer", fi.Producer, "vllm"},
		{"Platform", fi.Platform, "rocm"},
		{"HasGraphs", fi.HasGraphs, true},
		{"HasSteps", fi.HasSteps, true},
		{"HasPython", fi.HasPython, true},
		{"HasSyncEvents", fi.HasSyncEvents, false},
		{"FirstTsNs", fi.FirstTsNs, int64(90000)},
		{"LastEndNs", fi.LastEndNs, int64(160500)},
		{"Processes", len(fi.Processes), 2},
		{"process name", fi.Processes[0].Name, "[TP01-DP00-PP00-EP00] python3"},
		{"process labels", fi.Processes[0].Labels, "CPU"},
		{"process sort", fi.Processes[0].SortIndex, int64(5)},
		{"thread", fi.Threads[0], ThreadInfo{Pid: "5", Tid: "7", Name: "thread 7 (python3)", SortIndex: -3, HasSortIndex: true}},
		{"coords 5", fi.PidCoords["5"], Coords{Rank: 1, TP: 1}},
		{"coords 6", fi.PidCoords["6"], Coords{Rank: 0}},
		{"meta counts", fi.MetaCounts["process_name"], int64(2)},
		{"ph counts", fi.PhCounts["M"], int64(6)},
		{"Metadata", string(fi.Metadata), `{"schemaVersion":1,"deviceProperties":[{"id":0,"name":"AMD Instinct MI300X","totalGlobalMem":205822885888}],"distributedInfo":{"backend":"nccl","rank":3,"world_size":8},"traceName":"t.json","baseTimeNanoseconds":1700000000000000000,"vllm_version":"0.9.1"}`},
	}
	for _, c := range checks {
		if c.got != c.want {
			t.Errorf("%s = %v, want %v", c.what, c.got, c.want)
		}
	}
	sum := FileInfo{}
	_ = sum
	if len(fi.SHA256) != 64 || fi.JSONBytes != int64(len(doc)) || fi.FileBytes != int64(len(doc)) {
		t.Errorf("SHA256 %q, JSONBytes %d, FileBytes %d", fi.SHA256, fi.JSONBytes, fi.FileBytes)
	}
}

// TestFileInfoComputeCapability checks CCMajor/CCMinor: device 0's
// computeMajor/computeMinor as written, -1 for both when either is absent
// or not a number.
func TestFileInfoComputeCapability(t *testing.T) {
	events := `"traceEvents":[{"ph":"X","cat":"cpu_op","name":"a","pid":1,"tid":1,"ts":1,"dur":1}]`
	tests := []struct {
		name, doc    string
		major, minor int
	}{
		{"cuda", `{"deviceProperties":[{"name":"Tesla V100-SXM2-32GB","computeMajor":7,"computeMinor":0},{"name":"x","computeMajor":8,"computeMinor":0}],` + events + `}`, 7, 0},
		{"rocm gfx942", `{"deviceProperties":[{"name":"","computeMajor":9,"computeMinor":4}],` + events + `}`, 9, 4},
		{"no CC", `{"deviceProperties":[{"name":"NVIDIA H100 80GB HBM3","totalGlobalMem":85000000000}],` + events + `}`, -1, -1},
		{"major only", `{"deviceProperties":[{"name":"NVIDIA H100","computeMajor":9}],` + events + `}`, -1, -1},
		{"not a number", `{"deviceProperties":[{"name":"NVIDIA H100","computeMajor":"x","computeMinor":0}],` + events + `}`, -1, -1},
		{"negative", `{"deviceProperties":[{"name":"NVIDIA H100","computeMajor":-1,"computeMinor":0}],` + events + `}`, -1, -1},
		{"empty list", `{"deviceProperties":[],` + events + `}`, -1, -1},
		{"no deviceProperties", `{` + events + `}`, -1, -1},
		{"legacy array", `[{"name":"a","ph":"X","ts":1,"dur":1,"tid":1,"pid":1}]`, -1, -1},
	}
	for _, tc := range tests {
		_, fi, err := collect(t, tc.doc, LoadOptions{})
		if err != nil {
			t.Fatalf("%s: %v", tc.name, err)
		}
		if fi.CCMajor != tc.major || fi.CCMinor != tc.minor {
			t.Errorf("%s: CCMajor, CCMinor = %d, %d, want %d, %d", tc.name, fi.CCMajor, fi.CCMinor, tc.major, tc.minor)
		}
	}
}

func TestParseLegacyAndGzip(t *testing.T) {
	doc := `[{"name": "ProfilerStep#1", "ph": "X", "ts": 267, "dur": 12401, "tid": 1, "pid": "CPU functions", "args": {}}]`
	var gz bytes.Buffer
	zw := gzip.NewWriter(&gz)
	zw.Write([]byte(doc))
	zw.Close()
	path := filepath.Join(t.TempDir(), "legacy.json.gz")
	if err := os.WriteFile(path, gz.Bytes(), 0o644); err != nil {
		t.Fatal(err)
	}
	var n int
	var last Progress
	fi, err := ParseFile(path, LoadOptions{}, func(e *Event) error {
		n++
		if e.Pid != "CPU functions" || e.TsNs != 267000 || e.DurNs != 12401000 || e.Args != nil {
			t.Errorf("event = %+v", e)
		}
		return nil
	}, func(p Progress) { last = p })
	if err != nil {
		t.Fatal(err)
	}
	if n != 1 || fi.Format != "legacy" || fi.Producer != "profiler_step" || fi.Platform != "cpu" || string(fi.Metadata) != "{}" ||
		fi.FileBytes != int64(gz.Len()) || fi.JSONBytes != int64(len(doc)) || fi.GPUModel != "unknown" {
		t.Errorf("FileInfo = %+v", fi)
	}
	if !last.Done || last.BytesRead != int64(len(doc)) || last.Events != 1 {
		t.Errorf("last progress = %+v", last)
	}
}

// TestParseLargeEvents checks events larger than the buffer and events that
// straddle refills.
func TestParseLargeEvents(t *testing.T) {
	var sb strings.Builder
	sb.WriteString(`{"traceEvents":[`)
	big := strings.Repeat("x", 3<<20)
	for i := 0; i < 2000; i++ {
		if i > 0 {
			sb.WriteString(",\n")
		}
		name := "op"
		if i == 1000 {
			name = big
		}
		sb.WriteString(`{"ph":"X","cat":"cpu_op","name":"` + name + `","ts":1,"dur":1,"args":{"External id":1,"k":"` + strings.Repeat("y", i%700) + `"}}`)
	}
	sb.WriteString(`]}`)
	evs, fi, err := collect(t, sb.String(), LoadOptions{})
	if err != nil {
		t.Fatal(err)
	}
	if len(evs) != 2000 || fi.Events != 2000 || evs[1000].Name != big || len(evs[1999].Args) != len(`{"k":""}`)+1999%700 {
		t.Errorf("got %d events", len(evs))
	}
}

func TestParse_Errors(t *testing.T) {
	good := `{"traceEvents":[{"ph":"X","name":"a","ts":1,"dur":2}]}`
	var gz bytes.Buffer
	zw := gzip.NewWriter(&gz)
	zw.Write([]byte(strings.Repeat(good[:len(good)-2]+",", 1)))
	zw.Close()
	truncGz := gz.Bytes()[:gz.Len()-6]
	tests := []struct {
		name string
		in   string
		want error
		msg  string
	}{
		{"empty", "", ErrNotJSON, "trace bad.json: offset 0: empty input: not JSON"},
		{"not json", "hello", ErrNotJSON, "offset 0: expected '{' or '[' at the start, found 'h'"},
		{"no traceEvents", `{"schemaVersion":1}`, ErrNoTraceEvents, "offset 19: the top-level object has no traceEvents key"},
		{"traceEvents not array", `{"traceEvents":{}}`, ErrNoTraceEvents, `offset 15: traceEvents is not an array (found '{')`},
		{"truncated in event", `{"traceEvents":[{"ph":"X","name":"ab`, ErrTruncated, "offset 36: traceEvents[0]: the input ends inside an event: truncated JSON"},
		{"truncated between events", `{"traceEvents":[{"ph":"X"},`, ErrTruncated, "traceEvents[1]: the input ends inside traceEvents"},
		{"truncated after array", `{"traceEvents":[]`, ErrTruncated, "offset 17: the input ends expected ',' or '}' after a top-level value"},
		{"truncated metadata", `{"traceEvents":[], "x": [1, 2`, ErrTruncated, "the input ends inside a value"},
		{"ts not a number", `{"traceEvents":[{"ph":"X","ts":"abc"}]}`, ErrBadTimestamp, `offset 31: traceEvents[0]: ts "abc" is not a number: bad timestamp`},
		{"ts true", `{"traceEvents":[{"ph":"X","ts":true}]}`, ErrBadTimestamp, `ts true is not a number`},
		{"negative dur", `{"traceEvents":[{"ph":"X","ts":1,"dur":-5}]}`, ErrBadDuration, "offset 39: traceEvents[0]: dur -5 is negative: bad duration"},
		{"NaN dur", `{"traceEvents":[{"ph":"X","ts":1,"dur":NaN}]}`, ErrBadDuration, "dur NaN is not a number"},
		{"NaN dur string", `{"traceEvents":[{"ph":"X","ts":1,"dur":"nan"}]}`, ErrBadDuration, `dur "nan" is not a number`},
		{"absurd dur", `{"traceEvents":[{"ph":"X","ts":1,"dur":604800000001}]}`, ErrAbsurdTime, "dur 604800000001 µs is beyond the plausible range"},
		{"negative ts", `{"traceEvents":[{"ph":"X","ts":-1}]}`, ErrAbsurdTime, "ts -1 is negative"},
		{"huge ts", `{"traceEvents":[{"ph":"X","ts":1e21}]}`, ErrAbsurdTime, "ts 1e21 µs is beyond the plausible range"},
		{"bad escape", `{"traceEvents":[{"ph":"X","name":"a\qb"}]}`, ErrSyntax, `offset 36: traceEvents[0]: invalid escape in a string, found 'q'`},
		{"bad escape in args", `{"traceEvents":[{"ph":"X","args":{"k":"a\qb"}}]}`, ErrSyntax, `offset 41: traceEvents[0]: invalid escape in a string, found 'q'`},
		{"bad \\u escape", `{"traceEvents":[{"ph":"X","name":"a\u00g0"}]}`, ErrSyntax, `offset 37: traceEvents[0]: invalid \u escape, found '0'`},
		{"bad \\u escape in a pair", `{"traceEvents":[{"ph":"X","name":"\ud800\udcxx"}]}`, ErrSyntax, `offset 42: traceEvents[0]: invalid \u escape, found 'd'`},
		{"truncated \\u escape", `{"traceEvents":[{"ph":"X","name":"a\u00`, ErrTruncated, "offset 39: traceEvents[0]: the input ends inside an event"},
		{"truncated after a high surrogate", `{"traceEvents":[{"ph":"X","name":"\ud800`, ErrTruncated, "offset 40: traceEvents[0]: the input ends inside an event"},
		// The string is whole, so its value is judged as for "ts":"x".
		{"truncated after a ts ending in a surrogate", `{"traceEvents":[{"ph":"X","ts":"\ud800"`, ErrBadTimestamp, `offset 31: traceEvents[0]: ts "\ud800" is not a number`},
		{"bad number", `{"traceEvents":[{"ph":"X","args":{"a":-x}}]}`, ErrSyntax, "expected a digit"},
		{"missing colon", `{"traceEvents":[{"ph" "X"}]}`, ErrSyntax, `expected ':' after a key, found '"'`},
		{"element not object", `{"traceEvents":[1]}`, ErrSyntax, "traceEvents[0]: expected an event object"},
		{"trailing data", good + " x", ErrSyntax, "data after the end of the JSON document"},
		{"truncated gzip", string(truncGz), ErrTruncatedGzip, "truncated gzip stream"},
		{"corrupt gzip", "\x1f\x8b\x08\x00\x00\x00\x00\x00\x00\xffgarbage", ErrBadGzip, "corrupt gzip stream"},
		{"deep nesting", `{"traceEvents":[{"args":{"a":` + strings.Repeat("[", 2000) + strings.Repeat("]", 2000) + `}}]}`, ErrSyntax, "nested too deep"},
	}
	for _, tc := range tests {
		t.Run(tc.name, func(t *testing.T) {
			_, err := Parse(strings.NewReader(tc.in), "bad.json", LoadOptions{}, nil)
			if !errors.Is(err, tc.want) {
				t.Fatalf("Parse = %v, want %v", err, tc.want)
			}
			if !strings.Contains(err.Error(), tc.msg) || !strings.Contains(err.Error(), "bad.json") {
				t.Errorf("Parse error = %q, want it to contain %q", err, tc.msg)
			}
		})
	}
}

func TestParseFile_Errors(t *testing.T) {
	dir := t.TempDir()
	_, err := ParseFile(filepath.Join(dir, "missing.json"), LoadOptions{}, nil, nil)
	if !errors.Is(err, ErrUnreadable) || !errors.Is(err, os.ErrNotExist) || !strings.Contains(err.Error(), "missing.json") {
		t.Errorf("ParseFile(missing) = %v", err)
	}
	_, err = ParseFile(dir, LoadOptions{}, nil, nil)
	if !errors.Is(err, ErrUnreadable) {
		t.Errorf("ParseFile(dir) = %v", err)
	}
	stop := errors.New("stop")
	_, err = Parse(strings.NewReader(`{"traceEvents":[{"ph":"X"}]}`), "s.json", LoadOptions{}, func(*Event) error { return stop })
	if !errors.Is(err, stop) || !errors.Is(err, ErrSinkAborted) {
		t.Errorf("Parse with failing sink = %v", err)
	}
}

func TestParseFilePlainSHA256(t *testing.T) {
	doc := []byte(`{"traceEvents":[{"ph":"X","cat":"cpu_op","name":"aten::mm","pid":1,"tid":1,"ts":5,"dur":1}],"traceName":"x"}` + "\n")
	path := filepath.Join(t.TempDir(), "plain.json")
	if err := os.WriteFile(path, doc, 0o644); err != nil {
		t.Fatal(err)
	}
	fi, err := ParseFile(path, LoadOptions{}, nil, nil)
	if err != nil {
		t.Fatal(err)
	}
	sum := sha256.Sum256(doc)
	if fi.SHA256 != hex.EncodeToString(sum[:]) || fi.FileBytes != int64(len(doc)) || fi.JSONBytes != int64(len(doc)) || fi.Path != path {
		t.Errorf("FileInfo = %+v", fi)
	}
}

// The legacy bare-array format (the autograd profiler without Kineto)
// writes operators and record_function ranges without a cat: ProfilerStep#N
// is a step annotation, every other complete event a CPU operator. The same
// events in the object form stay "other".
func TestLegacyKinds(t *testing.T) {
	events := `{"name": "ProfilerStep#1", "ph": "X", "ts": 1, "dur": 10, "tid": 1, "pid": "CPU functions"},
		{"name": "aten::mm", "ph": "X", "ts": 2, "dur": 3, "tid": 1, "pid": "CPU functions"},
		{"name": "marker", "ph": "i", "ts": 4, "tid": 1, "pid": "CPU functions"}`
	for _, c := range []struct {
		name, doc string
		want      []Kind
	}{
		{"legacy array", "[" + events + "]", []Kind{KindAnnotation, KindCPUOp, KindInstant}},
		{"object form", `{"traceEvents": [` + events + `]}`, []Kind{KindOther, KindOther, KindInstant}},
	} {
		t.Run(c.name, func(t *testing.T) {
			path := filepath.Join(t.TempDir(), "t.json")
			if err := os.WriteFile(path, []byte(c.doc), 0o644); err != nil {
				t.Fatal(err)
			}
			var got []Kind
			if _, err := ParseFile(path, LoadOptions{}, func(e *Event) error {
				got = append(got, e.Kind)
				return nil
			}, nil); err != nil {
				t.Fatal(err)
			}
			if !slices.Equal(got, c.want) {
				t.Errorf("kinds %v, want %v", got, c.want)
			}
		})
	}
}
