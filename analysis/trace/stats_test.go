package trace

import (
	"encoding/json"
	"math"
	"os"
	"path/filepath"
	"testing"

	"github.com/tracebook/tracebook/internal/testutil"
)

// traceStats is the part of ../shared/traces/stats.json the test compares.
type traceStats struct {
	Path              string            `json:"path"`
	UncompressedBytes int64             `json:"uncompressed_bytes"`
	CompressedBytes   int64             `json:"compressed_bytes"`
	NumTraceEvents    int64             `json:"num_traceEvents"`
	PhCounts          map[string]int64  `json:"ph_counts"`
	CatCounts         map[string]int64  `json:"cat_counts"`
	FlowCounts        map[string]int64  `json:"flow_counts"`
	MetadataNames     map[string]int64  `json:"metadata_event_names"`
	MinTsUs           *float64          `json:"min_ts_us"`
	MaxEndUs          *float64          `json:"max_end_us"`
	DistributedInfo   map[string]any    `json:"distributedInfo"`
	GPUNames          []string          `json:"gpu_names"`
	ProfilerSteps     int               `json:"profiler_steps"`
	ProcessNames      map[string]string `json:"process_names"`
}

func loadStats(t *testing.T) (string, []traceStats) {
	t.Helper()
	dir := testutil.SharedTraces(t)
	b, err := os.ReadFile(filepath.Join(dir, "stats.json"))
	if err != nil {
		t.Fatal(err)
	}
	var stats []traceStats
	if err := json.Unmarshal(b, &stats); err != nil {
		t.Fatal(err)
	}
	return dir, stats
}

// TestSharedTracesMatchStats parses every shared trace and compares the
// counts per ph, per cat (metadata as "<M:name>", no cat as "<none>") and per
// flow cat/ph with stats.json, written by an independent Python script.
func TestSharedTracesMatchStats(t *testing.T) {
	dir, stats := loadStats(t)
	if len(stats) == 0 {
		t.Fatal("stats.json lists no traces")
	}
	for _, st := range stats {
		t.Run(st.Path, func(t *testing.T) {
			flows := map[string]int64{}
			fi, err := ParseFile(filepath.Join(dir, st.Path), LoadOptions{}, func(e *Event) error {
				if e.Kind == KindFlow && (e.Ph == "s" || e.Ph == "f" || e.Ph == "t") {
					flows[e.Cat+"/"+e.Ph]++
				}
				return nil
			}, nil)
			if err != nil {
				t.Fatal(err)
			}
			if fi.JSONBytes != st.UncompressedBytes {
				t.Errorf("JSONBytes = %d, want %d", fi.JSONBytes, st.UncompressedBytes)
			}
			if fi.FileBytes != st.CompressedBytes {
				t.Errorf("FileBytes = %d, want %d", fi.FileBytes, st.CompressedBytes)
			}
			var total int64
			for _, n := range fi.PhCounts {
				total += n
			}
			if total != st.NumTraceEvents {
				t.Errorf("events = %d, want %d", total, st.NumTraceEvents)
			}
			compareCounts(t, "ph", fi.PhCounts, st.PhCounts)
			cats := map[string]int64{}
			for c, n := range fi.CatCounts {
				if c == "" {
					c = "<none>"
				}
				cats[c] += n
			}
			for name, n := range fi.MetaCounts {
				cats["<M:"+name+">"] += n
			}
			compareCounts(t, "cat", cats, st.CatCounts)
			compareCounts(t, "flow", flows, st.FlowCounts)
			if st.MinTsUs != nil {
				if d := math.Abs(float64(fi.FirstTsNs)/1e3 - *st.MinTsUs); d > 1 {
					t.Errorf("FirstTsNs = %d, want about %.3f µs", fi.FirstTsNs, *st.MinTsUs)
				}
				if d := math.Abs(float64(fi.LastEndNs)/1e3 - *st.MaxEndUs); d > 1 {
					t.Errorf("LastEndNs = %d, want about %.3f µs", fi.LastEndNs, *st.MaxEndUs)
				}
			}
			if r, ok := st.DistributedInfo["rank"].(float64); ok {
				if !fi.HasDistributedRank || fi.DistributedRank != int(r) {
					t.Errorf("DistributedRank = %d (%v), want %v", fi.DistributedRank, fi.HasDistributedRank, r)
				}
			} else if fi.HasDistributedRank {
				t.Errorf("HasDistributedRank = true, want false")
			}
			wantGPU := "unknown"
			if len(st.GPUNames) > 0 && st.GPUNames[0] != "" {
				wantGPU = st.GPUNames[0]
			}
			if fi.GPUModel != wantGPU {
				t.Errorf("GPUModel = %q, want %q", fi.GPUModel, wantGPU)
			}
			for pid, name := range st.ProcessNames {
				found := false
				for _, p := range fi.Processes {
					if p.Pid == pid && p.Name == name {
						found = true
					}
				}
				if !found {
					t.Errorf("process %s named %q not in Processes", pid, name)
				}
			}
			if want, ok := wantDetect[st.Path]; ok {
				if got := fi.Format + " " + fi.Producer + " " + fi.Platform; got != want {
					t.Errorf("format producer platform = %q, want %q", got, want)
				}
			}
			t.Logf("%s: format=%s producer=%s platform=%s graphs=%v sync=%v python=%v steps=%v",
				st.Path, fi.Format, fi.Producer, fi.Platform, fi.HasGraphs, fi.HasSyncEvents, fi.HasPython, fi.HasSteps)
		})
	}
}

// wantDetect is the format, producer and platform of traces whose origin
// is known (MANIFEST.md).
var wantDetect = map[string]string{
	"deepseek/train_h800_ep64/train.json.gz":                                                "kineto profiler_step cuda",
	"generated-cpu/torch1.13.1_legacy_smallnet/cpu_smallnet.1795988122404.pt.trace.json.gz": "legacy profiler_step cpu",
	"hta/amd_mi250_minitoy/mi250_minitoy_train_ROCm6_2_kineto.json.gz":                      "kineto profiler_step rocm",
	"hta/cpu_only/rank-34.Jul_15_10_52_41.1074.pt.trace.json.gz":                            "kineto profiler_step cpu",
	"hta/mtia_single_rank/mtia_rank_0.json.gz":                                              "kineto profiler_step mtia",
	"hta/inference_rank1_oldcats/inference_rank_1.json.gz":                                  "kineto_2021 unknown cuda",
	"kineto/resnet50_num_workers_0/worker0.1623143089861.pt.trace.json.gz":                  "kineto_2021 profiler_step cuda",
	"tracelens/b200_eager/eager_trace.json.gz":                                              "kineto vllm cuda",
	"tracelens/sglang_qwen3_decode_mi300x/sglang_Qwen3-8B_decode.json.gz":                   "kineto sglang rocm",
	"tracelens/vllm_decode_full_mi300x/graph_execution.json.gz":                             "kineto vllm rocm",
	"tracemap/vllm_h100_tp4_rank0/1_h100_1000isl_10osl_32con.pt.trace.json.gz":              "kineto vllm cuda",
	"tracemap/vllm_mi300x_tp4_rank0/1_mi300x_1000isl_10osl_32con.pt.trace.json.gz":          "kineto vllm rocm",
}

func compareCounts(t *testing.T, what string, got, want map[string]int64) {
	t.Helper()
	for k, w := range want {
		if got[k] != w {
			t.Errorf("%s %q: got %d, want %d", what, k, got[k], w)
		}
	}
	for k, g := range got {
		if _, ok := want[k]; !ok && g != 0 {
			t.Errorf("%s %q: got %d, want none", what, k, g)
		}
	}
}
