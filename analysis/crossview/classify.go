package crossview

import (
	"strings"

	"github.com/tracebook/tracebook/analysis/internal/rx"
)

// WaitPatterns match the frames in which a host thread waits for work
// rather than doing it. Self time inside such a frame (and inside its
// callees) is "waiting" in the CPU view.
var WaitPatterns = []*rx.Regexp{
	// vLLM worker waiting on the engine core's broadcast.
	rx.MustCompile(`shm_broadcast\.py\(\d+\): (dequeue|acquire_read)`),
	rx.MustCompile(`(^|[^A-Za-z_])sched_yield`),
	// Condition/Event waits, queue gets, sleeps, selectors and zmq polls.
	rx.MustCompile(`threading\.py\(\d+\): wait$`),
	rx.MustCompile(`queue\.py\(\d+\): get$`),
	rx.MustCompile(`^<built-in (function|method) (sleep|select|poll|epoll|recv|recv_multipart|acquire)[ >]`),
	rx.MustCompile(`selectors\.py\(\d+\): select$`),
	rx.MustCompile(`zmq/sugar/(poll|socket)\.py\(\d+\): (poll|recv|recv_multipart)$`),
	// A DataLoader waiting for its worker processes: the python frame, or,
	// without python stacks, the iterator's own range, whose children on
	// the main thread are a few pin and collate operators (resnet_2080ti:
	// 1.6 ms of operators in 6,244 ms of __next__).
	rx.MustCompile(`dataloader\.py\(\d+\): _(try_)?get_data$`),
	rx.MustCompile(`^enumerate\(DataLoader\)#_MultiProcessingDataLoaderIter\.__next__$`),
}

// waitWords are substrings that every WaitPatterns match contains: a
// cheap test that rules most names out before the regular expressions run.
var waitWords = []string{"shm_broadcast", "sched_yield", "threading.py", "queue.py", "<built-in", "selectors.py", "zmq/", "dataloader.py", "_MultiProcessingDataLoaderIter"}

// SelfWaitPatterns match the frames whose own self time is waiting but
// whose callees are not: autograd's run_backward, in which the calling
// thread waits while the engine's device threads run the backward
// (mi300x_resnet_act_checkpoint: 29 ms of the main thread's self time in
// three backward passes), and in which, on CPU tensors, the engine runs
// its operators on the calling thread itself, as callees that work.
var SelfWaitPatterns = []*rx.Regexp{
	rx.MustCompile(`^<built-in method run_backward of torch\._C\._EngineBase object`),
}

// IsSelfWait reports whether a frame name is a SelfWaitPatterns frame.
func IsSelfWait(name string) bool {
	if !strings.Contains(name, "run_backward") {
		return false
	}
	for _, re := range SelfWaitPatterns {
		if re.MatchString(name) {
			return true
		}
	}
	return false
}

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

// How an event is classified is not decided here: the crossview preset
// rates each row with the macros of sql/views.sql (tb_kernel_class,
// tb_sync_call, tb_scalar_read, tb_copy_waits), the one definition the
// evidence presets call too, and this package reads the rating (Op.Class,
// Frame.Sync). classify_sql_test.go checks that the cross-view and the
// evidence rate the same events the same way.

// How a host call synchronizes with the device, as the presets rate it
// (tb_sync_call): the crossview preset's and the Perfetto window's sync
// column.
const (
	SyncBlocking = "blocking" // the host waits for the device
	SyncStream   = "stream"   // a stream waits (cudaStreamWaitEvent); the host does not
)

var addrRE = rx.MustCompile(` at 0x[0-9a-fA-F]+`)

// frameName is a frame's name as the trees show it: the name as written,
// less the object addresses that python frames of bound methods carry
// (`<built-in method tolist of Tensor object at 0x7bc2e88c4500>`), which
// would otherwise split one call site into many nodes.
func frameName(kind HostKind, name string) string {
	if kind == HostPython && strings.Contains(name, " at 0x") {
		return addrRE.ReplaceAllLiteralString(name, "")
	}
	return name
}
