package trace

import "strings"

// KindOf maps an event's phase and cat to its Kind. Phases decide first
// (s/f/t are flows, C counters, i/I instants), then the cat, in its current
// Kineto and its 2021 spelling. On MTIA, Kineto writes device work (compute
// kernels and dma_request transfers alike) as cat mtia_ccp_events and the
// host calls that submit it as mtia_runtime: they are kernels and runtime
// calls, as HTA counts them.
func KindOf(ph, cat string) Kind {
	switch ph {
	case "s", "f", "t":
		return KindFlow
	case "C":
		return KindCounter
	case "i", "I":
		return KindInstant
	}
	switch cat {
	case "kernel", "Kernel", "mtia_ccp_events":
		return KindKernel
	case "gpu_memcpy", "Memcpy":
		return KindGPUMemcpy
	case "gpu_memset", "Memset":
		return KindGPUMemset
	case "cuda_sync":
		return KindGPUSync
	case "gpu_user_annotation":
		return KindGPUAnnotation
	case "cpu_op", "Operator":
		return KindCPUOp
	case "user_annotation":
		return KindAnnotation
	case "python_function":
		return KindPython
	case "cuda_runtime", "Runtime", "mtia_runtime":
		return KindRuntime
	case "cuda_driver":
		return KindDriver
	case "cpu_instant_event":
		return KindInstant
	case "ac2g", "fwdbwd", "async", "async_cpu_to_gpu", "async_gpu":
		return KindFlow
	case "overhead":
		return KindOverhead
	}
	return KindOther
}

// legacyKind is the kind of a complete event without a cat in the legacy
// bare-array format (the autograd profiler without Kineto), which records
// only CPU operators and record_function ranges: ProfilerStep#N ranges
// are the steps' annotations, every other event an operator.
func legacyKind(name string) Kind {
	if strings.HasPrefix(name, "ProfilerStep#") {
		return KindAnnotation
	}
	return KindCPUOp
}

// APIOf says what a host runtime or driver call does, from its name. It
// returns APINone for kinds other than runtime and driver.
func APIOf(kind Kind, name string) API {
	if kind != KindRuntime && kind != KindDriver {
		return APINone
	}
	switch name {
	case "cudaLaunchKernel", "cudaLaunchKernelExC", "cuLaunchKernel", "cuLaunchKernelEx",
		"hipLaunchKernel", "hipExtModuleLaunchKernel", "hipModuleLaunchKernel":
		return APILaunch
	case "runFunction - job_prep_and_submit_for_execution":
		// MTIA: submits one job (its device events carry the correlation).
		return APILaunch
	case "cudaGraphLaunch", "hipGraphLaunch", "cuGraphLaunch":
		return APIGraphLaunch
	case "cudaDeviceSynchronize", "cudaStreamSynchronize", "cudaEventSynchronize",
		"hipDeviceSynchronize", "hipStreamSynchronize", "hipEventSynchronize",
		"cuCtxSynchronize", "cuStreamSynchronize", "cuEventSynchronize",
		"cudaStreamWaitEvent", "hipStreamWaitEvent", "cuStreamWaitEvent":
		return APISync
	}
	switch {
	case strings.HasPrefix(name, "cudaMemcpy"), strings.HasPrefix(name, "hipMemcpy"), strings.HasPrefix(name, "cuMemcpy"):
		return APIMemcpy
	case strings.HasPrefix(name, "cudaMemset"), strings.HasPrefix(name, "hipMemset"), strings.HasPrefix(name, "cuMemset"):
		return APIMemset
	}
	return APIOther
}

// isGPUKind reports whether events of the kind run on the device.
func isGPUKind(k Kind) bool {
	return k == KindKernel || k == KindGPUMemcpy || k == KindGPUMemset
}
