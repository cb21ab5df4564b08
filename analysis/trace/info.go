package trace

import (
	"encoding/json"
	"regexp"
	"sort"
	"strconv"
	"strings"
)

// FileInfo is what the importer learned about one trace file besides its
// events: identity, top-level metadata, capability flags and counts.
type FileInfo struct {
	Path      string // as given to ParseFile, or the name given to Parse
	SHA256    string // hex SHA-256 of the bytes read (the file as stored, compressed or not)
	FileBytes int64  // bytes read from the file (compressed size for .gz)
	JSONBytes int64  // uncompressed JSON bytes parsed

	// Format is "kineto" (current object form), "kineto_2021" (2021 cats
	// Operator/Runtime/Kernel/Memcpy/Memset or lowercase "external id") or
	// "legacy" (a bare JSON array: the autograd profiler without Kineto).
	Format        string
	SchemaVersion int
	BaseTimeNs    int64 // top-level baseTimeNanoseconds, 0 when absent
	TraceName     string
	// Metadata is a JSON object of every top-level key except traceEvents,
	// compacted; "{}" when there is none.
	Metadata json.RawMessage

	HasDistributedRank bool // distributedInfo.rank was present
	DistributedRank    int
	WorldSize          int // distributedInfo.world_size, 0 when absent

	GPUModel    string // deviceProperties[0].name; "unknown" when absent or empty, never guessed
	GPUTotalMem int64  // deviceProperties[0].totalGlobalMem in bytes, 0 when absent
	// CCMajor and CCMinor are deviceProperties[0].computeMajor and
	// computeMinor, -1 when absent. On ROCm they are the GFXIP version
	// (gfx90a 9.0, gfx942 9.4), not an NVIDIA compute capability.
	CCMajor, CCMinor int
	// GPUNumSMs is deviceProperties[0].numSms, 0 when absent: the SM count
	// on CUDA, the compute-unit count on ROCm (304 on an MI300X), which
	// with the GFXIP version and the memory tells an AMD part whose name
	// the trace leaves empty (analysis/device.Identify).
	GPUNumSMs   int
	VLLMVersion string // top-level vllm_version, when present

	// Producer is "vllm" (vllm_version metadata or python frames under a
	// "vllm/" path), else "sglang" ("sglang/" frames or step[...]
	// annotations), else "vllm" (execute_…_context_…_generation_… or
	// execute_context_/execute_new_ step annotations, which SGLang traces
	// may carry too), else evidence.ProducerProfilerStep (ProfilerStep# annotations:
	// a torch.profiler loop, training or inference), else "unknown".
	Producer string
	// Platform is "rocm" (hip* runtime calls, hipGraphLaunch, AMD device
	// names), "mtia" (mtia_* cats), "cuda" (cuda*/cu* runtime or driver
	// calls, or GPU events with a non-AMD device), "cpu" (no GPU events) or
	// "unknown" (GPU events and nothing that tells the platform).
	Platform string

	HasGraphs     bool // cudaGraphLaunch/hipGraphLaunch calls or "graph id" args
	HasSyncEvents bool // cat cuda_sync present
	HasPython     bool // python_function events present
	HasSteps      bool // ProfilerStep#, execute_context_/execute_new_ or step[ annotations

	Events    int64 // non-metadata events in the file (those passed to the sink plus Skipped)
	Skipped   int64 // events not passed to the sink (LoadOptions.NoPython)
	FirstTsNs int64 // smallest ts over non-metadata events with a ts
	LastEndNs int64 // largest ts+dur over the same events

	Processes []ProcessInfo // from ph M process_* events, in order of first appearance
	Threads   []ThreadInfo  // from ph M thread_* events, in order of first appearance

	// PidCoords maps a pid whose process_name or process_labels carries
	// parallelism coordinates ("[TP00-DP00-PP00-EP00]" in merged vLLM traces,
	// "TP-0-DP-0-PP-0-EP-0" in SGLang) to them. Empty for ordinary traces.
	PidCoords map[string]Coords

	CatCounts  map[string]int64 // non-metadata events per cat as written ("" when absent)
	PhCounts   map[string]int64 // every traceEvents element per ph, metadata included ("" when absent)
	MetaCounts map[string]int64 // metadata (ph M) events per name
}

// ProcessInfo is the metadata of one pid.
type ProcessInfo struct {
	Pid          string
	Name         string // process_name args.name
	Labels       string // process_labels args.labels
	SortIndex    int64  // process_sort_index args.sort_index
	HasSortIndex bool
}

// ThreadInfo is the metadata of one (pid, tid).
type ThreadInfo struct {
	Pid, Tid     string
	Name         string // thread_name args.name
	SortIndex    int64  // thread_sort_index args.sort_index
	HasSortIndex bool
}

// Coords are the parallelism coordinates of one rank of a merged trace.
//
// Rank is derived, not read: with TPn, PPn and EPn the sizes seen in the
// trace (largest index + 1), Rank = ((DP×PPn + PP)×TPn + TP)×EPn + EP. That
// is the rank's position when the coordinates are ordered by (DP, PP, TP,
// EP), TP varying fastest after EP, the order vLLM and SGLang number their
// workers in; when every rank of the job is present it equals the global
// rank. EP is 0 where the producer derives it from DP×TP.
type Coords struct {
	Rank, TP, DP, PP, EP int
}

var coordsRE = regexp.MustCompile(`TP-?(\d+)-DP-?(\d+)(?:-PP-?(\d+))?(?:-EP-?(\d+))?`)

// parseCoords reads TP/DP/PP/EP coordinates from a process name or label.
func parseCoords(s string) (Coords, bool) {
	if !strings.Contains(s, "TP") {
		return Coords{}, false
	}
	m := coordsRE.FindStringSubmatch(s)
	if m == nil {
		return Coords{}, false
	}
	n := func(x string) int {
		v, err := strconv.Atoi(x)
		if err != nil || v < 0 || v > 1<<20 {
			return 0
		}
		return v
	}
	return Coords{TP: n(m[1]), DP: n(m[2]), PP: n(m[3]), EP: n(m[4])}, true
}

// assignRanks fills Rank in every Coords of m (see Coords).
func assignRanks(m map[string]Coords) {
	tpn, ppn, epn := 1, 1, 1
	for _, c := range m {
		tpn = max(tpn, c.TP+1)
		ppn = max(ppn, c.PP+1)
		epn = max(epn, c.EP+1)
	}
	for pid, c := range m {
		c.Rank = ((c.DP*ppn+c.PP)*tpn+c.TP)*epn + c.EP
		m[pid] = c
	}
}

// Ranks returns the distinct ranks of PidCoords, ascending.
func (fi *FileInfo) Ranks() []int {
	seen := map[int]bool{}
	var out []int
	for _, c := range fi.PidCoords {
		if !seen[c.Rank] {
			seen[c.Rank] = true
			out = append(out, c.Rank)
		}
	}
	sort.Ints(out)
	return out
}

// topLevel is the part of the top-level metadata the importer reads.
type topLevel struct {
	SchemaVersion       json.Number `json:"schemaVersion"`
	BaseTimeNanoseconds json.Number `json:"baseTimeNanoseconds"`
	TraceName           any         `json:"traceName"`
	DistributedInfo     *struct {
		Rank      *json.Number `json:"rank"`
		WorldSize *json.Number `json:"world_size"`
	} `json:"distributedInfo"`
	DeviceProperties []struct {
		Name           any         `json:"name"`
		TotalGlobalMem json.Number `json:"totalGlobalMem"`
		ComputeMajor   json.Number `json:"computeMajor"`
		ComputeMinor   json.Number `json:"computeMinor"`
		NumSms         json.Number `json:"numSms"`
	} `json:"deviceProperties"`
	VLLMVersion any `json:"vllm_version"`
}

// applyMetadata fills the FileInfo fields read from the top-level keys.
// Metadata of an unexpected type is ignored field by field: it stays in
// Metadata as written.
func (fi *FileInfo) applyMetadata() {
	fi.GPUModel = "unknown"
	fi.CCMajor, fi.CCMinor = -1, -1
	var tl topLevel
	_ = json.Unmarshal(fi.Metadata, &tl) // best effort: type mismatches leave fields empty
	if v, err := tl.SchemaVersion.Int64(); err == nil {
		fi.SchemaVersion = int(v)
	}
	if v, err := tl.BaseTimeNanoseconds.Int64(); err == nil {
		fi.BaseTimeNs = v
	}
	if s, ok := tl.TraceName.(string); ok {
		fi.TraceName = s
	}
	if di := tl.DistributedInfo; di != nil {
		if di.Rank != nil {
			if v, err := di.Rank.Int64(); err == nil && v >= 0 && v < 1<<31 {
				fi.DistributedRank, fi.HasDistributedRank = int(v), true
			}
		}
		if di.WorldSize != nil {
			if v, err := di.WorldSize.Int64(); err == nil && v >= 0 && v < 1<<31 {
				fi.WorldSize = int(v)
			}
		}
	}
	if len(tl.DeviceProperties) > 0 {
		if s, ok := tl.DeviceProperties[0].Name.(string); ok && s != "" {
			fi.GPUModel = s
		}
		if v, err := tl.DeviceProperties[0].TotalGlobalMem.Int64(); err == nil {
			fi.GPUTotalMem = v
		}
		// Both or neither: a major without its minor is not a capability.
		major, errMajor := tl.DeviceProperties[0].ComputeMajor.Int64()
		minor, errMinor := tl.DeviceProperties[0].ComputeMinor.Int64()
		if errMajor == nil && errMinor == nil && major >= 0 && major < 1<<16 && minor >= 0 && minor < 1<<16 {
			fi.CCMajor, fi.CCMinor = int(major), int(minor)
		}
		if v, err := tl.DeviceProperties[0].NumSms.Int64(); err == nil && v > 0 && v < 1<<31 {
			fi.GPUNumSMs = int(v)
		}
	}
	switch v := tl.VLLMVersion.(type) {
	case string:
		fi.VLLMVersion = v
	case nil:
	default:
		b, _ := json.Marshal(v)
		fi.VLLMVersion = string(b)
	}
}

func isAMDDevice(name string) bool {
	return strings.Contains(name, "AMD") || strings.Contains(name, "Instinct") || strings.Contains(name, "Radeon")
}
