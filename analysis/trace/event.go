package trace

// Event is one non-metadata trace event, normalised: times are integer
// nanoseconds, the hot args are typed fields, and every other arg is kept
// verbatim in Args as a JSON object.
//
// The importer reuses one Event value between calls to the sink: a sink that
// keeps an event must copy it (strings are immutable and safe to keep; Args
// must be copied).
type Event struct {
	Ph   string // phase as written: "X", "i", "I", "s", "f", "t", "C", "b", "e", ...
	Cat  string // the trace's own cat, as written ("kernel", "Kernel", "cpu_op", "Operator", ...)
	Kind Kind   // normalised category, see Kind
	API  API    // for host runtime/driver calls: what the call does; APINone otherwise
	Name string

	Pid string // as written: numbers are kept in decimal, strings ("stream 7", "Spans") as is
	Tid string

	TsNs  int64 // ts converted exactly from float microseconds
	DurNs int64 // 0 when the event has no dur

	// Typed args; a field is meaningful only when its bit is set in Has.
	Has            Field
	Correlation    int64
	ExternalID     int64
	PythonID       int64
	PythonParentID int64
	EvIdx          int64
	SeqNo          int64 // "Sequence number"
	FwdTid         int64 // "Fwd thread id"
	Stream         int64
	Device         int64
	Bytes          int64
	MemBWGBps      float64 // "memory bandwidth (GB/s)"
	GraphID        int64
	FlowID         int64  // flow events: the "id" field (a string id is hashed, see FlowIDOf)
	Grid           string // "[x, y, z]" as written, compacted
	Block          string

	BP    string // flow events: the binding point "bp" ("e"), as written
	Scope string // instant events: the scope "s" ("t", "p", "g"), as written

	Args []byte // the remaining args as a JSON object, or nil when none remain
}

// Field is a bit set of the typed args that an Event carries.
type Field uint32

// The typed args.
const (
	HasDur Field = 1 << iota
	HasCorrelation
	HasExternalID
	HasPythonID
	HasPythonParentID
	HasEvIdx
	HasSeqNo
	HasFwdTid
	HasStream
	HasDevice
	HasBytes
	HasMemBW
	HasGraphID
	HasFlowID
	HasGrid
	HasBlock
	HasTs // the event has a ts; metadata-like rows without one keep TsNs 0
)

// Kind is the normalised category of an event: the current Kineto cats and
// the 2021 ones (Operator, Runtime, Kernel, Memcpy, Memset, async) map to one
// vocabulary.
type Kind string

// The kinds. Their string values are stored in the events.kind column.
const (
	KindKernel        Kind = "kernel"         // GPU kernel
	KindGPUMemcpy     Kind = "gpu_memcpy"     // GPU-side copy
	KindGPUMemset     Kind = "gpu_memset"     // GPU-side memset
	KindGPUSync       Kind = "gpu_sync"       // cat cuda_sync: Stream Sync, Event Sync, Context Sync, Stream Wait Event
	KindGPUAnnotation Kind = "gpu_annotation" // gpu_user_annotation
	KindCPUOp         Kind = "cpu_op"         // cpu_op, Operator
	KindAnnotation    Kind = "annotation"     // user_annotation (ProfilerStep#, execute_*, record_function)
	KindPython        Kind = "python"         // python_function
	KindRuntime       Kind = "runtime"        // cuda_runtime, Runtime, hip runtime
	KindDriver        Kind = "driver"         // cuda_driver
	KindInstant       Kind = "instant"        // cpu_instant_event and other ph i/I
	KindCounter       Kind = "counter"        // ph C
	KindFlow          Kind = "flow"           // ph s/f/t: ac2g, fwdbwd, async, async_cpu_to_gpu
	KindOverhead      Kind = "overhead"       // profiler overhead rows
	KindOther         Kind = "other"          // anything else, kept as is
)

// Kinds is every Kind in alphabetical order, the order of the database's
// tb_kind (sql/schema.sql).
var Kinds = []Kind{KindAnnotation, KindCounter, KindCPUOp, KindDriver, KindFlow, KindGPUAnnotation,
	KindGPUMemcpy, KindGPUMemset, KindGPUSync, KindInstant, KindKernel, KindOther, KindOverhead, KindPython, KindRuntime}

// API says what a host runtime or driver call does, the same word for the
// CUDA and HIP spellings.
type API string

// The APIs. Their string values are stored in the events.api column.
const (
	APINone        API = ""
	APILaunch      API = "launch"       // cudaLaunchKernel, cuLaunchKernel, hipLaunchKernel, hipExtModuleLaunchKernel, ...
	APIGraphLaunch API = "graph_launch" // cudaGraphLaunch, hipGraphLaunch
	APISync        API = "sync"         // cudaStreamSynchronize, cudaDeviceSynchronize, cudaEventSynchronize, hip*Synchronize, cudaStreamWaitEvent
	APIMemcpy      API = "memcpy"       // cudaMemcpy*, hipMemcpy*
	APIMemset      API = "memset"       // cudaMemset*, hipMemset*
	APIOther       API = "other"        // every other runtime or driver call
)

// APIs is every API but APINone in alphabetical order, the order of the
// database's tb_api (sql/schema.sql).
var APIs = []API{APIGraphLaunch, APILaunch, APIMemcpy, APIMemset, APIOther, APISync}

// End returns the end time in nanoseconds.
func (e *Event) End() int64 { return e.TsNs + e.DurNs }
