package crossview

import (
	"regexp"
	"strings"
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

// IsSync reports whether a host frame blocks the host on the device.
// copiesToHost says whether a memcpy call launched a device-to-host copy or
// a copy from pageable memory (both make cudaMemcpyAsync synchronous).
func IsSync(kind, api, name string, copiesToHost bool) bool {
	switch kind {
	case "cpu_op":
		return name == "aten::item" || name == "aten::_local_scalar_dense"
	case "runtime", "driver":
	default:
		return false
	}
	switch api {
	case "sync":
		return !strings.Contains(name, "WaitEvent")
	case "memcpy":
		if !strings.Contains(name, "Async") {
			return true // cudaMemcpy, hipMemcpy, hipMemcpyWithStream, cuMemcpyDtoH, ...
		}
		return copiesToHost
	}
	return false
}

// copiesToHost reports whether a GPU copy's name makes its launching
// memcpy call wait for the device.
func copiesToHost(kind, name string) bool {
	return kind == "gpu_memcpy" && (strings.Contains(name, "DtoH") || strings.Contains(name, "Pageable"))
}

// commRE matches communication kernels (ANCHORS 7.3: not only HTA's ^nccl).
var commRE = regexp.MustCompile(`(?i)^(nccl|rccl)|ncclDevKernel|ncclKernel|cross_device_reduce|all_reduce|allreduce|all_gather|allgather|reduce_scatter|reducescatter|alltoall`)

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
