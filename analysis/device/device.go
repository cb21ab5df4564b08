// Package device says what a GPU can run: tensor cores and the number
// formats they take (FP16, BF16, TF32, FP8, FP4), whether torch.compile's
// Triton backend accepts it, and its dense peak and memory bandwidth,
// keyed on the device name and compute capability a trace's
// deviceProperties carry.
//
// It owns the capability table and its lookup only; deciding which fix to
// print is analysis/findings'.
package device

// Caps is what one device supports. Known is false when neither the name
// nor the compute capability identified it: then every capability is
// unknown, not absent, and a fix that needs one must say what to check.
type Caps struct {
	Known       bool
	Vendor      string // nvidia, amd or "" when unknown
	Family      string // e.g. "Volta (V100)", "Hopper (H100/H200)", "CDNA3 (MI300X)"
	CCMajor     int    // compute capability (ROCm: GFXIP) as given, -1 when absent
	CCMinor     int
	TensorCores bool // any tensor / matrix cores
	FP16TC      bool
	BF16        bool // BF16 tensor-core math
	TF32        bool
	FP8         bool
	FP4         bool
	// Compile: torch.compile's Inductor/Triton backend runs (CUDA CC >= 7.0).
	Compile bool
	// TritonTC: Triton's dot uses tensor cores (CC >= 8.0 in Triton >= Nov 2024).
	TritonTC bool
	// PeakTFLOPs is the dense BF16/FP16 tensor peak of one device, 0 when unknown.
	PeakTFLOPs float64
	// MemTBs is the memory bandwidth in TB/s, 0 when unknown.
	MemTBs float64
	// Source names the reference the row comes from.
	Source string
}

// Lookup returns the capabilities of the device named name with compute
// capability major.minor (-1 when the trace does not give it) on platform
// (cuda, rocm, ...).
func Lookup(name string, ccMajor, ccMinor int, platform string) Caps {
	return Caps{CCMajor: ccMajor, CCMinor: ccMinor}
}
