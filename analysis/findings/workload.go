package findings

// Workload is what the trace shows about one rank's workload and framework,
// read from the workload area. Fixes are scoped by it: a fix whose
// precondition it contradicts is never printed.
type Workload struct {
	// Known is false when the workload area is missing (an older bundle):
	// every field is then unknown, not false.
	Known bool
	// Training: backward or optimizer operators ran (autograd engine,
	// *Backward ops, Optimizer.step). False with Known means inference.
	Training bool
	// Compiled: torch.compile is in use (Torch-Compiled Region,
	// CompiledFunction, ## Call CompiledFxGraph, TorchDynamo frames).
	Compiled bool
	// DDP, FSDP, TorchRec: what the operators show of the parallelism.
	DDP, FSDP, TorchRec bool
	// DataLoaderWorkers: 0 for _SingleProcessDataLoaderIter, 1 for
	// _MultiProcessingDataLoaderIter (workers, count unknown), -1 unknown.
	DataLoaderWorkers int
	// Era is the trace-format era when the categories date it
	// ("2021": Operator/Runtime/Kernel categories, about PyTorch 1.8-1.10),
	// "" when they do not.
	Era string
	// TorchMajor is the PyTorch major version the trace implies at least
	// (2 when torch.compile frames are present), 0 when unknown.
	TorchMajor int
}

// workload returns what the workload area shows for trace and rank.
func (c *ctx) workload(trace string, rank int) Workload {
	return Workload{DataLoaderWorkers: -1}
}
