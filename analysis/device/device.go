// Package device says what a GPU can run: tensor cores and the number
// formats they take (FP16, BF16, TF32, FP8, FP4), whether torch.compile's
// Triton backend accepts it, and its dense peak and memory bandwidth,
// keyed on the device name and compute capability a trace's
// deviceProperties carry.
//
// It owns the capability table and its lookup only; deciding which fix to
// print is analysis/findings'. It imports only the standard library.
//
// # How a device is identified
//
// The vendor is decided first, from the name ("NVIDIA", "Tesla", "Quadro",
// "GeForce"; "AMD", "Instinct", "Radeon") or the row it matches, else from
// the platform (cuda; rocm or hip). Only then is the compute capability
// read, because on ROCm computeMajor/computeMinor is the GFXIP version:
// gfx90a (MI210/MI250/MI250X) reports 9.0 and gfx942 (MI300X/MI325X) 9.4,
// which an NVIDIA reading would take for Hopper.
//
// A name in the table gives its family's capabilities and, where the
// table has them for that part, its peak and bandwidth. On AMD, a name
// that identifies no part ("", as the vLLM MI300X traces write, or ROCm's
// generic "AMD Radeon Graphics") is followed by the other properties
// (Identify): the GFXIP version, the compute-unit count (numSms) and the
// memory (totalGlobalMem) are looked up in amdParts, the ROCm
// specification table. One part that fits is named in Model (GFXIP 9.4,
// 304 CUs and 192 GiB are an MI300X) and gives its figures; several that
// fit (an MI210 and one GCD of an MI250 both show 104 CUs and 64 GiB) are
// listed in Candidates, and no model is chosen among them.
//
// Otherwise a compute capability gives capabilities derived from it: on
// NVIDIA Family is "sm_XY"; on ROCm 9.4 is CDNA3 (gfx942), 9.5 CDNA4
// (gfx950, capabilities unknown) and 9.0 is taken as CDNA2 (gfx90a),
// though GFXIP 9.0 is shared with gfx900/gfx906/gfx908 (MI25, MI50/MI60,
// MI100): Inferred says so, and PeakTFLOPs and MemTBs stay 0 because the
// exact part is not known. Neither a name nor a compute capability (or an
// unknown vendor) gives Known=false.
//
// # Sources
//
// The rows follow docs/JUDGEMENT.md §1.2–1.3; its tags:
//
//   - [CC] developer.nvidia.com/cuda-gpus and /cuda-legacy-gpus (compute
//     capabilities); [CC-OLD] an earlier copy listing A30 = 8.0.
//   - [CUTE] CUTLASS CuTe DSL cute_nvgpu_warp: F16/BF16 MMA sm_80+, FP8
//     MMA SM89, block-scaled MXF4 sm_120.
//   - [PT-TF32] PyTorch notes/cuda.rst, TF32 on Ampere and later.
//   - [PT-SCALED] PyTorch Blas.cpp: _scaled_mm needs CC >= 8.9 or ROCm MI300+.
//   - [PT-IND] PyTorch torch/_inductor/scheduler.py: Triton needs CC >= 7.0.
//   - [TRITON-5066] Triton PR #5066: dot falls back to FMA below CC 8.0.
//   - [VOLTA-WP], [DELL], [T4-3P], [A100-DS], [H100-DS], [H200], [B200],
//     [L4-3P], [4090-3P], [5090-3P]: peak and bandwidth figures (3rd-party
//     reproductions are marked so in JUDGEMENT.md).
//   - [ROCM-SPECS] ROCm gpu-arch-specs (LLVM target, GFXIP major/minor,
//     compute units, VRAM per part); gfx950 (MI350X/MI355X: GFXIP 9.5,
//     256 CUs, 288 GiB) is from its develop page
//     (rocmdocs.amd.com/en/develop/reference/gpu-arch-specs.html,
//     2026-02-20), the pinned copy predating it;
//     [ROCM-PREC] ROCm precision-support (matrix types per target);
//     [ROCM-MI250], [ROCM-MI300], [MI325X-3P]: AMD figures.
//
// Figures JUDGEMENT.md marks "(unverified)" carry that word in Source.
package device

import (
	"fmt"
	"strconv"
	"strings"

	"github.com/tracebook/tracebook/analysis/internal/rx"
)

// Caps is what one device supports. Known is false when neither the name
// nor the compute capability identified it: then every capability is
// unknown, not absent, and a fix that needs one must say what to check.
type Caps struct {
	Known       bool
	Vendor      string // nvidia, amd or "" when unknown
	Family      string // e.g. "Volta (V100)", "Hopper (H100/H200)", "CDNA3 (MI300X)"; "sm_XY" when derived from the CC alone
	Arch        string // compiler target: sm_70, sm_90, gfx90a, gfx942; "" when unknown
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
	// Inferred is true when the capabilities were derived from the compute
	// capability alone (the name is empty or not in the table), or from
	// properties that fit several parts (Candidates): the family is known,
	// the exact part and so its peak and bandwidth are not.
	Inferred bool
	// Model is the part the device's other properties identify where its
	// name does not (Identify): "MI300X" for an empty name with GFXIP 9.4,
	// 304 CUs and 192 GiB. "" when the name decided, or when no part or
	// several fit.
	Model string
	// Candidates are the parts those properties fit when several do
	// ("MI250", "MI210"), in amdParts order; nil otherwise.
	Candidates []string
	// From says what Model or Candidates was read from:
	// "GFXIP 9.4, 304 CUs, 192 GiB".
	From string
}

// Props is what a trace's deviceProperties say about device 0.
type Props struct {
	Name             string
	CCMajor, CCMinor int    // computeMajor/computeMinor (ROCm: GFXIP), -1 when absent
	NumSMs           int    // numSms: SMs on NVIDIA, compute units (CUs) on AMD; 0 when absent
	TotalMem         int64  // totalGlobalMem in bytes, 0 when absent
	Platform         string // cuda, rocm, ...
}

// flags are the capabilities a family row sets.
type flags struct {
	tc, fp16, bf16, tf32, fp8, fp4, compile, tritonTC bool
}

// part is one device of a family: a name pattern and its figures.
type part struct {
	re   *rx.Regexp
	peak float64 // dense BF16/FP16 TFLOP/s of one device, 0 when not in the sources
	mem  float64 // TB/s, 0 when not in the sources
}

// family is one row of the table: every part in it has the same compute
// capability and the same capabilities.
type family struct {
	vendor       string
	name, arch   string
	major, minor int
	known        bool // false: a name recognised only so that the CC is not read as another family
	caps         flags
	src          string
	parts        []part
}

// dev builds a part; the pattern is case-insensitive.
func dev(pattern string, peak, mem float64) part {
	return part{re: rx.MustCompile(`(?i)` + pattern), peak: peak, mem: mem}
}

var (
	noTC   = flags{}                                                                                       // Pascal: no tensor cores, Inductor refuses CC < 7.0
	fp16TC = flags{tc: true, fp16: true, compile: true}                                                    // Volta, Turing
	ampere = flags{tc: true, fp16: true, bf16: true, tf32: true, compile: true, tritonTC: true}            // sm_80, sm_86
	fp8TC  = flags{tc: true, fp16: true, bf16: true, tf32: true, fp8: true, compile: true, tritonTC: true} // sm_89, sm_90
	fp4TC  = flags{tc: true, fp16: true, bf16: true, tf32: true, fp8: true, fp4: true, compile: true, tritonTC: true}
	cdna2  = flags{tc: true, fp16: true, bf16: true, compile: true, tritonTC: true}                        // MFMA; no TF32 matrix, no FP8
	cdna3  = flags{tc: true, fp16: true, bf16: true, tf32: true, fp8: true, compile: true, tritonTC: true} // xf32 matrix, FNUZ FP8, no FP4
)

// table is the capability table of JUDGEMENT.md §1.2, one row per family.
// A name is matched against the parts in table order, first match wins,
// so a specific pattern comes before the general one of the same device.
var table = []family{
	{vendor: "nvidia", name: "Pascal (P100/GP100)", arch: "sm_60", major: 6, minor: 0, known: true, caps: noTC, src: "[CC][DELL]",
		parts: []part{dev(`\bP100-SXM2`, 0, 0.732), dev(`\bG?P100\b`, 0, 0)}},
	{vendor: "nvidia", name: "Pascal (P40/P4/GTX 10xx)", arch: "sm_61", major: 6, minor: 1, known: true, caps: noTC, src: "[CC]",
		parts: []part{dev(`\bP40\b`, 0, 0), dev(`\bP4\b`, 0, 0), dev(`\bGTX 10[5-8]0`, 0, 0), dev(`\bQuadro P[0-9]{3,4}\b`, 0, 0)}},
	{vendor: "nvidia", name: "Volta (V100)", arch: "sm_70", major: 7, minor: 0, known: true, caps: fp16TC, src: "[CC][VOLTA-WP][DELL]",
		// 120 TFLOP/s is the whitepaper's figure at 1455 MHz; the SXM2 datasheet's 125 is unverified.
		parts: []part{dev(`\bV100-SXM2`, 120, 0.90), dev(`\bV100`, 0, 0), dev(`\bTITAN V\b`, 0, 0), dev(`\bGV100\b`, 0, 0)}},
	{vendor: "nvidia", name: "Turing (T4/RTX 20xx)", arch: "sm_75", major: 7, minor: 5, known: true, caps: fp16TC, src: "[CC][T4-3P]",
		parts: []part{dev(`\bT4\b`, 65, 0.32), dev(`\bRTX 20[0-9]0`, 0, 0), dev(`\bTITAN RTX\b`, 0, 0), dev(`\bQuadro RTX [3-8]000\b`, 0, 0)}},
	// TU116/TU117 have no tensor cores though they are CC 7.5.
	{vendor: "nvidia", name: "Turing without tensor cores (GTX 16xx)", arch: "sm_75", major: 7, minor: 5, known: true,
		caps: flags{compile: true}, src: "[CC]; no tensor cores on TU116/TU117 (unverified)",
		parts: []part{dev(`\bGTX 16[0-9]0`, 0, 0)}},
	{vendor: "nvidia", name: "Ampere (A100/A30)", arch: "sm_80", major: 8, minor: 0, known: true, caps: ampere, src: "[CC][CC-OLD][A100-DS]; A30 figures (unverified)",
		parts: []part{dev(`\bA100-SXM4?-80GB`, 312, 2.039), dev(`\bA100\b.*\b40GB`, 312, 1.555), dev(`\bA100([^0-9]|$)`, 312, 0),
			dev(`\bA30\b`, 165, 0.933), dev(`\bA800\b`, 0, 0)}},
	{vendor: "nvidia", name: "Ampere (A10/A40/RTX 30xx)", arch: "sm_86", major: 8, minor: 6, known: true, caps: ampere, src: "[CC]; A10 figures (unverified)",
		parts: []part{dev(`\bA10\b`, 125, 0.6), dev(`\bA10G\b`, 0, 0), dev(`\bA40\b`, 0, 0), dev(`\bA16\b`, 0, 0), dev(`\bA2\b`, 0, 0),
			dev(`\bRTX A[0-9]{4}\b`, 0, 0), dev(`\bRTX 30[0-9]0`, 0, 0)}},
	{vendor: "nvidia", name: "Ada (L4/L40/RTX 40xx)", arch: "sm_89", major: 8, minor: 9, known: true, caps: fp8TC, src: "[CC][CUTE][L4-3P][4090-3P]",
		// GeForce: the FP32-accumulate rate (what PyTorch's BF16/FP16 GEMMs use) is half the FP16-accumulate one.
		// L4: the lower end of the ≈121–125 the source quotes.
		parts: []part{dev(`\bL4\b`, 121, 0.30), dev(`\bL40S?\b`, 0, 0), dev(`\bL20\b`, 0, 0), dev(`\bRTX 4090`, 165, 1.008), dev(`\bRTX 40[0-9]0`, 0, 0),
			dev(`\bRTX [0-9]000 Ada\b`, 0, 0), dev(`\bAda Generation\b`, 0, 0)}},
	{vendor: "nvidia", name: "Hopper (H100/H200)", arch: "sm_90", major: 9, minor: 0, known: true, caps: fp8TC, src: "[CC][H100-DS][H200]; H20 CC (unverified); H800 9.0 as the deepseek trace gives it",
		parts: []part{dev(`\bH100\b.*\bPCIe\b`, 756, 2.0), dev(`\bH100\b.*\bNVL\b`, 0, 0), dev(`\bH100\b.*\b(HBM3|SXM)`, 989, 3.35), dev(`\bH100\b`, 0, 0),
			dev(`\bH200\b.*\bNVL\b`, 0, 0), dev(`\bH200\b`, 989, 4.8), dev(`\bGH200\b`, 0, 0), dev(`\bH800\b`, 0, 0), dev(`\bH20\b`, 0, 0)}},
	{vendor: "nvidia", name: "Blackwell (B200/GB200)", arch: "sm_100", major: 10, minor: 0, known: true, caps: fp4TC, src: "[CC][CUTE][B200]",
		parts: []part{dev(`\bB200\b`, 2250, 8.0), dev(`\bGB200\b`, 2500, 8.0)}},
	{vendor: "nvidia", name: "Blackwell Ultra (B300/GB300)", arch: "sm_103", major: 10, minor: 3, known: true, caps: fp4TC, src: "[CC][B200]",
		parts: []part{dev(`\bG?B300\b`, 0, 0)}},
	{vendor: "nvidia", name: "Blackwell (RTX 50xx/RTX PRO)", arch: "sm_120", major: 12, minor: 0, known: true, caps: fp4TC, src: "[CC][CUTE][5090-3P]; RTX 5090 peak derived (half the FP16-accumulate figure)",
		// 209.5 = half of the ≈419 FP16-accumulate figure (3rd-party), as for every GeForce part.
		parts: []part{dev(`\bRTX 5090`, 209.5, 1.792), dev(`\bRTX 50[0-9]0`, 0, 0), dev(`\bRTX PRO [0-9]000 Blackwell`, 0, 0)}},
	{vendor: "nvidia", name: "Blackwell (GB10)", arch: "sm_121", major: 12, minor: 1, known: true, caps: fp4TC, src: "[CC]",
		parts: []part{dev(`\bGB10\b`, 0, 0)}},
	// One device is one GCD: the vendor's MI250/MI250X figures are per OAM (two GCDs) and are halved here.
	{vendor: "amd", name: "CDNA2 (MI210/MI250/MI250X)", arch: "gfx90a", major: 9, minor: 0, known: true, caps: cdna2, src: "[ROCM-SPECS][ROCM-MI250][ROCM-PREC]; MI250X figure (unverified)",
		parts: []part{dev(`\bMI250X / MI250\b`, 0, 1.6), dev(`\bMI250X\b`, 191.5, 1.6), dev(`\bMI250\b`, 181.05, 1.6), dev(`\bMI210\b`, 0, 0)}},
	{vendor: "amd", name: "CDNA3 (MI300X/MI325X)", arch: "gfx942", major: 9, minor: 4, known: true, caps: cdna3, src: "[ROCM-SPECS][ROCM-MI300][ROCM-PREC][MI325X-3P]",
		parts: []part{dev(`\bMI300X\b`, 1307.4, 5.3), dev(`\bMI325X\b`, 1307.4, 6.0), dev(`\bMI30[08][AX]?\b`, 0, 0)}},
	// CDNA4: JUDGEMENT.md has no capability row for it (its FP4 support is
	// unverified), so its capabilities stay unknown; the arch is said.
	{vendor: "amd", name: "CDNA4 (MI350X/MI355X)", arch: "gfx950", major: 9, minor: 5, known: false, src: "[ROCM-SPECS] develop page (gfx950, GFXIP 9.5)",
		parts: []part{dev(`\bMI35[05]X?\b`, 0, 0)}},
	// AMD parts outside the table: named here so that their GFXIP 9.x is not read as gfx90a.
	{vendor: "amd", name: "AMD device not in the table", known: false, src: "[ROCM-SPECS]",
		parts: []part{dev(`\bMI(6|8|25|50|60|100)\b`, 0, 0), dev(`\bRadeon (Pro )?VII\b`, 0, 0)}},
}

// The derived rows: what a compute capability alone says.
var (
	cdna2Derived = family{vendor: "amd", name: "CDNA2 (gfx90a, from GFXIP 9.0)", arch: "gfx90a", major: 9, minor: 0, known: true, caps: cdna2,
		src: "[ROCM-SPECS][ROCM-PREC]; GFXIP 9.0 is also gfx900/gfx906/gfx908"}
	cdna3Derived = family{vendor: "amd", name: "CDNA3 (gfx942, from GFXIP 9.4)", arch: "gfx942", major: 9, minor: 4, known: true, caps: cdna3,
		src: "[ROCM-SPECS][ROCM-PREC]"}
	cdna4Derived = family{vendor: "amd", name: "CDNA4 (gfx950, from GFXIP 9.5)", arch: "gfx950", major: 9, minor: 5, known: false,
		src: "[ROCM-SPECS] develop page (gfx950, GFXIP 9.5)"}
)

// amdPart is one row of the ROCm specification table: what an AMD device
// reports besides its name. An MI250/MI250X shows each of its two GCDs as
// a device [ROCM-MI250], so its row holds one GCD's CUs and memory.
type amdPart struct {
	model        string // as the name table matches it (match)
	arch         string
	major, minor int     // GFXIP version
	cus          int     // compute units of one device (numSms)
	memGiB       float64 // memory of one device; 0: not compared
}

// amdParts are the AMD parts [ROCM-SPECS] lists with a GFXIP 9 version,
// from the pinned copy (@e396b489) unless marked. A device whose name
// identifies no part is matched against them by GFXIP version, CU count
// and memory (fitsMem); the parts that fit are named in table order.
var amdParts = []amdPart{
	{model: "MI325X", arch: "gfx942", major: 9, minor: 4, cus: 304, memGiB: 256},
	{model: "MI300X", arch: "gfx942", major: 9, minor: 4, cus: 304, memGiB: 192},
	// The APU's 128 GiB are shared with its CPU cores: what totalGlobalMem
	// says there is unverified, so the CU count alone decides; no other
	// gfx942 part has 228.
	{model: "MI300A", arch: "gfx942", major: 9, minor: 4, cus: 228},
	// One GCD: the table gives 220 CUs (110 per GCD) and 128 GiB per OAM.
	{model: "MI250X", arch: "gfx90a", major: 9, minor: 0, cus: 110, memGiB: 64},
	// One GCD: 208 CUs (104 per GCD) and 128 GiB per OAM, as an MI210.
	{model: "MI250", arch: "gfx90a", major: 9, minor: 0, cus: 104, memGiB: 64},
	{model: "MI210", arch: "gfx90a", major: 9, minor: 0, cus: 104, memGiB: 64},
	{model: "MI100", arch: "gfx908", major: 9, minor: 0, cus: 120, memGiB: 32},
	{model: "MI60", arch: "gfx906", major: 9, minor: 0, cus: 64, memGiB: 32},
	{model: "MI50 32GB", arch: "gfx906", major: 9, minor: 0, cus: 60, memGiB: 32},
	{model: "MI50 16GB", arch: "gfx906", major: 9, minor: 0, cus: 60, memGiB: 16},
	{model: "Radeon Pro VII", arch: "gfx906", major: 9, minor: 0, cus: 60, memGiB: 16},
	{model: "Radeon VII", arch: "gfx906", major: 9, minor: 0, cus: 60, memGiB: 16},
	{model: "MI25", arch: "gfx900", major: 9, minor: 0, cus: 64, memGiB: 16},
	// The develop page of gpu-arch-specs (2026-02-20; the pinned copy
	// predates gfx950) gives both the same row.
	{model: "MI355X", arch: "gfx950", major: 9, minor: 5, cus: 256, memGiB: 288},
	{model: "MI350X", arch: "gfx950", major: 9, minor: 5, cus: 256, memGiB: 288},
}

// fitsMem says whether a device of mem bytes can be part p: within 5% of
// its memory (a driver reports a little less: 191.98 GiB on an MI300X),
// or either is not known.
func (p amdPart) fitsMem(mem int64) bool {
	if p.memGiB == 0 || mem <= 0 {
		return true
	}
	gib := float64(mem) / (1 << 30)
	return gib >= p.memGiB*0.95 && gib <= p.memGiB*1.05
}

// Lookup returns the capabilities of the device named name with compute
// capability major.minor (-1 when the trace does not give it) on platform
// (cuda, rocm, ...).
//
//	device.Lookup("Tesla V100-SXM2-32GB", 7, 0, "cuda").BF16 == false
//
// It reads the name and compute capability only; Identify reads the other
// properties too.
func Lookup(name string, ccMajor, ccMinor int, platform string) Caps {
	return Identify(Props{Name: name, CCMajor: ccMajor, CCMinor: ccMinor, Platform: platform})
}

// Identify returns the capabilities of the device p describes: as Lookup,
// and, on AMD where the name identifies no part, the part its GFXIP
// version, compute-unit count and memory identify (Model), or the parts
// they fit (Candidates).
//
//	device.Identify(device.Props{CCMajor: 9, CCMinor: 4, NumSMs: 304, TotalMem: 206141652992, Platform: "rocm"}).Model == "MI300X"
func Identify(p Props) Caps {
	name, ccMajor, ccMinor := p.Name, p.CCMajor, p.CCMinor
	if ccMajor <= 0 || ccMinor < 0 {
		ccMajor, ccMinor = -1, -1
	}
	hasCC := ccMajor > 0
	c := Caps{CCMajor: ccMajor, CCMinor: ccMinor}

	vendor := vendorOf(name, p.Platform)
	f, pt := match(name, vendorOf(name, ""))
	if f != nil {
		vendor = f.vendor
	}
	c.Vendor = vendor
	if f != nil && !f.known {
		c.Family, c.Arch, c.Source = f.name, f.arch, f.src
		return c
	}
	// A name row whose CC disagrees with the trace's is a wrong match: the
	// trace's CC, from the driver, decides.
	if f != nil && (!hasCC || (f.major == ccMajor && f.minor == ccMinor)) {
		c.fill(f)
		c.PeakTFLOPs, c.MemTBs = pt.peak, pt.mem
		return c
	}
	if !hasCC {
		return c
	}
	switch vendor {
	case "nvidia":
		return fromCC(c)
	case "amd":
		if byProps(&c, p.NumSMs, p.TotalMem) {
			return c
		}
		var d *family
		switch {
		case ccMajor == 9 && ccMinor == 0:
			d = &cdna2Derived
		case ccMajor == 9 && ccMinor == 4:
			d = &cdna3Derived
		case ccMajor == 9 && ccMinor == 5:
			c.Family, c.Arch, c.Source = cdna4Derived.name, cdna4Derived.arch, cdna4Derived.src
			return c
		default:
			return c
		}
		c.fill(d)
		c.Inferred = true
	}
	return c
}

// byProps identifies an AMD device of c's GFXIP version, with cus compute
// units and mem bytes, from amdParts, and fills c: the family and figures
// of the one part that fits (Model), or the family the parts that fit
// share, without figures (Candidates). false when no part fits or cus is
// not known.
func byProps(c *Caps, cus int, mem int64) bool {
	if cus <= 0 {
		return false
	}
	var fits []amdPart
	for _, p := range amdParts {
		if p.major == c.CCMajor && p.minor == c.CCMinor && p.cus == cus && p.fitsMem(mem) {
			fits = append(fits, p)
		}
	}
	if len(fits) == 0 {
		return false
	}
	c.From = fmt.Sprintf("GFXIP %d.%d, %d CUs", c.CCMajor, c.CCMinor, cus)
	if mem > 0 {
		c.From += fmt.Sprintf(", %.0f GiB", float64(mem)/(1<<30))
	}
	// The family and part rows the name table gives the models; a family
	// is kept only when every model is in it, an arch when all share it.
	f, pt := match(fits[0].model, "amd")
	arch := fits[0].arch
	for _, p := range fits[1:] {
		if g, _ := match(p.model, "amd"); g != f {
			f = nil
		}
		if p.arch != arch {
			arch = ""
		}
	}
	switch {
	case f != nil && f.known:
		c.fill(f)
	case f != nil:
		c.Known, c.Family, c.Source = false, f.name, f.src
	}
	c.Arch = arch
	if len(fits) == 1 {
		c.Model = fits[0].model
		if f != nil && f.known {
			c.PeakTFLOPs, c.MemTBs = pt.peak, pt.mem
		}
		return true
	}
	for _, p := range fits {
		c.Candidates = append(c.Candidates, p.model)
	}
	c.Inferred = c.Known
	return true
}

// match returns the family and part whose pattern matches name first,
// among the rows of vendor when the name's own words tell it ("" = any).
func match(name, vendor string) (*family, part) {
	if strings.TrimSpace(name) == "" {
		return nil, part{}
	}
	for i := range table {
		if vendor != "" && table[i].vendor != vendor {
			continue
		}
		for _, pt := range table[i].parts {
			if pt.re.MatchString(name) {
				return &table[i], pt
			}
		}
	}
	return nil, part{}
}

// vendorOf decides the vendor from the name's vendor words, else from the
// platform; "" when neither tells.
func vendorOf(name, platform string) string {
	n := strings.ToLower(name)
	for _, w := range []string{"amd", "instinct", "radeon"} {
		if strings.Contains(n, w) {
			return "amd"
		}
	}
	for _, w := range []string{"nvidia", "tesla", "quadro", "geforce", "titan"} {
		if strings.Contains(n, w) {
			return "nvidia"
		}
	}
	switch strings.ToLower(platform) {
	case "cuda", "nvidia":
		return "nvidia"
	case "rocm", "hip", "amd":
		return "amd"
	}
	return ""
}

func (c *Caps) fill(f *family) {
	c.Known = true
	c.Vendor, c.Family, c.Arch, c.Source = f.vendor, f.name, f.arch, f.src
	c.TensorCores, c.FP16TC, c.BF16, c.TF32 = f.caps.tc, f.caps.fp16, f.caps.bf16, f.caps.tf32
	c.FP8, c.FP4, c.Compile, c.TritonTC = f.caps.fp8, f.caps.fp4, f.caps.compile, f.caps.tritonTC
}

// fromCC derives the capabilities of an NVIDIA device from its compute
// capability (JUDGEMENT.md §1.3): tensor cores and FP16 from 7.0, BF16 and
// TF32 from 8.0, FP8 from 8.9, FP4 from 10.0 (Blackwell and later),
// Inductor from 7.0, Triton tensor-core dot from 8.0.
func fromCC(c Caps) Caps {
	cc := c.CCMajor*10 + min(c.CCMinor, 9)
	c.Known, c.Inferred = true, true
	c.Family = fmt.Sprintf("sm_%d%d", c.CCMajor, c.CCMinor)
	c.Arch = c.Family
	c.TensorCores, c.FP16TC = cc >= 70, cc >= 70
	c.BF16, c.TF32 = cc >= 80, cc >= 80
	c.FP8 = cc >= 89
	c.FP4 = c.CCMajor >= 10
	c.Compile, c.TritonTC = cc >= 70, cc >= 80
	c.Source = "[CC][CUTE][PT-TF32][PT-SCALED][PT-IND][TRITON-5066]"
	return c
}

// String is one line: the family, the formats its tensor cores take,
// compile support and the figures.
//
//	Volta (V100) sm_70 (CC 7.0): tensor cores FP16; no BF16, TF32, FP8, FP4; torch.compile yes, Triton tensor-core dot no; 120 TFLOP/s dense; 0.9 TB/s
func (c Caps) String() string {
	cc := "no CC"
	if c.CCMajor >= 0 {
		cc = fmt.Sprintf("CC %d.%d", c.CCMajor, c.CCMinor)
		if c.Vendor == "amd" {
			cc = fmt.Sprintf("GFXIP %d.%d", c.CCMajor, c.CCMinor)
		}
	}
	if !c.Known {
		what := "unknown device"
		if c.Family != "" {
			what = c.Family
		}
		if c.Arch != "" && !strings.Contains(what, c.Arch) {
			what += " " + c.Arch
		}
		if c.Vendor != "" {
			what += " (" + c.Vendor + ")"
		}
		return what + ", " + cc + ": capabilities unknown" + c.identified()
	}
	var b strings.Builder
	b.WriteString(c.Family)
	if c.Arch != "" && c.Arch != c.Family {
		b.WriteString(" " + c.Arch)
	}
	b.WriteString(" (" + cc + "): ")
	var has, not []string
	for _, f := range []struct {
		name string
		on   bool
	}{{"FP16", c.FP16TC}, {"BF16", c.BF16}, {"TF32", c.TF32}, {"FP8", c.FP8}, {"FP4", c.FP4}} {
		if f.on {
			has = append(has, f.name)
		} else {
			not = append(not, f.name)
		}
	}
	switch {
	case !c.TensorCores:
		b.WriteString("no tensor cores")
	default:
		b.WriteString("tensor cores " + strings.Join(has, ", "))
		if len(not) > 0 {
			b.WriteString("; no " + strings.Join(not, ", "))
		}
	}
	fmt.Fprintf(&b, "; torch.compile %s, Triton tensor-core dot %s", yesNo(c.Compile), yesNo(c.TritonTC))
	if c.PeakTFLOPs > 0 {
		fmt.Fprintf(&b, "; %g TFLOP/s dense", c.PeakTFLOPs)
	}
	if c.MemTBs > 0 {
		fmt.Fprintf(&b, "; %g TB/s", c.MemTBs)
	}
	switch {
	case c.Model != "" || len(c.Candidates) > 0:
		b.WriteString(c.identified())
	case c.Inferred:
		b.WriteString(" (from the CC alone)")
	}
	return b.String()
}

// identified says which part, or parts, the properties other than the
// name fit: " (MI300X from GFXIP 9.4, 304 CUs, 192 GiB)"; "" when the
// name decided.
func (c Caps) identified() string {
	switch {
	case c.Model != "":
		return " (" + c.Model + " from " + c.From + ")"
	case len(c.Candidates) > 0:
		return " (" + c.From + " fit " + orList(c.Candidates) + "; the model is not known)"
	}
	return ""
}

// orList joins words as "a, b or c".
func orList(words []string) string {
	if len(words) < 2 {
		return strings.Join(words, "")
	}
	return strings.Join(words[:len(words)-1], ", ") + " or " + words[len(words)-1]
}

func yesNo(b bool) string {
	if b {
		return "yes"
	}
	return "no"
}

// kernelArchRE finds the architecture an NVIDIA library kernel was written
// for in its name: cuBLAS and cuDNN's family prefix (volta_sgemm_...,
// ampere_bf16_s16816gemm_...), and the sm or cutlass_ number of CUTLASS
// and xmma kernels (sm80_xmma_gemm_..., cutlass_80_tensorop_s1688gemm_...).
var kernelArchRE = rx.MustCompile(`(?:^|[^A-Za-z0-9])(?:(volta|turing|ampere|hopper|blackwell)_|sm_?([1-9][0-9]{1,2})_|cutlass_([1-9][0-9]{1,2})_)`)

var familyCC = map[string][2]int{"volta": {7, 0}, "turing": {7, 5}, "ampere": {8, 0}, "hopper": {9, 0}, "blackwell": {10, 0}}

// MinCCFromKernels is the least compute capability that the GPU running
// kernels (their names) must have: a kernel written for an architecture
// runs on it and later ones only (an A100 runs volta_sgemm too), so the
// newest architecture named is a lower bound, not the device's own. ok is
// false when no name names one; kernel is the name that set the bound.
//
//	MinCCFromKernels([]string{"volta_sgemm_128x64_nn", "ampere_sgemm_128x64_nn"}) == 8, 0, "ampere_sgemm_128x64_nn", true
func MinCCFromKernels(kernels []string) (major, minor int, kernel string, ok bool) {
	best := -1
	for _, k := range kernels {
		for _, m := range kernelArchRE.FindAllString(k, -1) {
			if c := m[0]; !(c >= 'a' && c <= 'z' || c >= 'A' && c <= 'Z' || c >= '0' && c <= '9') {
				m = m[1:] // the separator before the name
			}
			m = strings.TrimSuffix(m, "_")
			cc := 0
			if f, ok := familyCC[m]; ok {
				cc = f[0]*10 + f[1]
			} else {
				cc, _ = strconv.Atoi(strings.TrimLeft(strings.TrimPrefix(strings.TrimPrefix(m, "cutlass"), "sm"), "_"))
			}
			if cc > best {
				best, kernel = cc, k
			}
		}
	}
	if best < 0 {
		return 0, 0, "", false
	}
	return best / 10, best % 10, kernel, true
}
