package crossview

import (
	"regexp"
	"strings"

	tbsql "github.com/tracebook/tracebook/sql"
)

// WaitPatterns match the frames in which a host thread waits for work
// rather than doing it. Self time inside such a frame (and inside its
// callees) is "waiting" in the CPU view.
var WaitPatterns = []*regexp.Regexp{
	// vLLM worker waiting on the engine core's broadcast.
	regexp.MustCompile(`shm_broadcast\.py\(\d+\): (dequeue|acquire_read)`),
	regexp.MustCompile(`(^|[^A-Za-z_])sched_yield`),
	// Condition/Event waits, queue gets, sleeps, selectors and zmq polls.
	regexp.MustCompile(`threading\.py\(\d+\): wait$`),
	regexp.MustCompile(`queue\.py\(\d+\): get$`),
	regexp.MustCompile(`^<built-in (function|method) (sleep|select|poll|epoll|recv|recv_multipart|acquire)[ >]`),
	regexp.MustCompile(`selectors\.py\(\d+\): select$`),
	regexp.MustCompile(`zmq/sugar/(poll|socket)\.py\(\d+\): (poll|recv|recv_multipart)$`),
	// A DataLoader waiting for its worker processes.
	regexp.MustCompile(`dataloader\.py\(\d+\): _(try_)?get_data$`),
}

// waitWords are substrings that every WaitPatterns match contains: a
// cheap test that rules most names out before the regular expressions run.
var waitWords = []string{"shm_broadcast", "sched_yield", "threading.py", "queue.py", "<built-in", "selectors.py", "zmq/", "dataloader.py"}

// IsWait reports whether a frame name is a wait frame.
func IsWait(name string) bool {
	hit := false
	for _, w := range waitWords {
		if strings.Contains(name, w) {
			hit = true
			break
		}
	}
	if !hit {
		return false
	}
	for _, re := range WaitPatterns {
		if re.MatchString(name) {
			return true
		}
	}
	return false
}

// The classifiers below are those of sql/views.sql, applied by Go to the
// rows this package builds its views from: the same class for the same
// event in the evidence and in the cross-view. The communication pattern
// is not copied: it is read out of views.sql (sql.CommKernelPattern). The
// other rules have no pattern to share; each function names the macro it
// follows, and classify_sql_test.go runs both over the same events.

// IsSync reports whether a host frame blocks the host on the device: a
// runtime or driver call that tb_sync_call classifies as blocking, or a
// scalar read (aten::item, aten::_local_scalar_dense), the operator that
// encloses such a call. copiesToHost says whether a memcpy call launched a
// copy that tb_copy_waits (device to host, or from pageable memory: both
// make cudaMemcpyAsync synchronous).
func IsSync(kind, api, name string, copiesToHost bool) bool {
	if kind == "cpu_op" {
		return name == "aten::item" || name == "aten::_local_scalar_dense"
	}
	return SyncCall(kind, api, name, copiesToHost) == SyncBlocking
}

// How a host call synchronizes with the device (SyncCall).
const (
	SyncBlocking = "blocking" // the host waits for the device
	SyncStream   = "stream"   // a stream waits (cudaStreamWaitEvent); the host does not
)

// SyncCall is tb_sync_call of sql/views.sql: SyncBlocking for a synchronize
// call (api sync), a synchronous copy (api memcpy without Async in the
// name: cudaMemcpy, hipMemcpyWithStream, cuMemcpyDtoH_v2, ...) and an
// Async copy whose GPU copy waits (copyWaits: CopyWaits of the copy it
// launched); SyncStream for a *StreamWaitEvent; "" otherwise.
func SyncCall(kind, api, name string, copyWaits bool) string {
	if kind != "runtime" && kind != "driver" {
		return ""
	}
	switch api {
	case "sync":
		if strings.Contains(name, "WaitEvent") {
			return SyncStream
		}
		return SyncBlocking
	case "memcpy":
		if !strings.Contains(name, "Async") || copyWaits {
			return SyncBlocking
		}
	}
	return ""
}

// CopyWaits is tb_copy_waits of sql/views.sql: whether a GPU copy, by its
// name, makes even the Async call that launched it wait for the device: a
// device-to-host copy (CopyDirection DtoH) or one that names pageable host
// memory.
func CopyWaits(name string) bool {
	return CopyDirection(name) == "DtoH" || strings.Contains(name, "Pageable")
}

// CopyDirection is tb_copy_direction of sql/views.sql: HtoD, DtoH, DtoD,
// ... from a copy's Kineto name (`Memcpy DtoH (Device -> Pageable)`); ""
// when the name does not say.
func CopyDirection(name string) string {
	rest, ok := strings.CutPrefix(name, "Memcpy ")
	if !ok {
		return ""
	}
	n := 0
	for n < len(rest) && isWordByte(rest[n]) {
		n++
	}
	return rest[:n]
}

// isWordByte is RE2's \w: an ASCII letter, digit or underscore.
func isWordByte(c byte) bool {
	return c == '_' || '0' <= c && c <= '9' || 'a' <= c && c <= 'z' || 'A' <= c && c <= 'Z'
}

// copiesToHost reports whether a GPU operation is a copy whose launching
// memcpy call waits for the device (CopyWaits).
func copiesToHost(kind, name string) bool {
	return kind == "gpu_memcpy" && CopyWaits(name)
}

// commRE is sql.CommKernelPattern, the pattern of tb_comm_kernel in
// sql/views.sql (docs/ANCHORS.md §7.3: not only HTA's ^nccl).
var commRE = regexp.MustCompile(`(?i)` + tbsql.CommKernelPattern)

// KernelClass is tb_kernel_class of sql/views.sql: MEM for GPU copies and
// memsets, SYNC for GPU-side waits (kind gpu_sync), COMM for kernels whose
// name sql.CommKernelPattern matches, COMP for other kernels, "" for host
// events.
func KernelClass(kind, name string) string {
	switch kind {
	case "gpu_memcpy", "gpu_memset":
		return "MEM"
	case "gpu_sync":
		return "SYNC"
	case "kernel":
		if commRE.MatchString(name) {
			return "COMM"
		}
		return "COMP"
	}
	return ""
}

// IsComm reports whether a GPU operation is a communication kernel.
func IsComm(kind, name string) bool { return kind == "kernel" && commRE.MatchString(name) }

var addrRE = regexp.MustCompile(` at 0x[0-9a-fA-F]+`)

// frameName is a frame's name as the trees show it: the name as written,
// less the object addresses that python frames of bound methods carry
// (`<built-in method tolist of Tensor object at 0x7bc2e88c4500>`), which
// would otherwise split one call site into many nodes.
func frameName(kind, name string) string {
	if kind == "python" && strings.Contains(name, " at 0x") {
		return addrRE.ReplaceAllString(name, "")
	}
	return name
}
