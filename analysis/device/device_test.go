package device

import (
	"strings"
	"testing"
)

// capSet names the capabilities c has, in a fixed order.
func capSet(c Caps) string {
	var s []string
	for _, f := range []struct {
		name string
		on   bool
	}{{"TC", c.TensorCores}, {"FP16", c.FP16TC}, {"BF16", c.BF16}, {"TF32", c.TF32}, {"FP8", c.FP8}, {"FP4", c.FP4},
		{"compile", c.Compile}, {"tritonTC", c.TritonTC}} {
		if f.on {
			s = append(s, f.name)
		}
	}
	return strings.Join(s, " ")
}

const (
	pascal = ""
	volta  = "TC FP16 compile"
	amp    = "TC FP16 BF16 TF32 compile tritonTC"
	fp8    = "TC FP16 BF16 TF32 FP8 compile tritonTC"
	fp4    = "TC FP16 BF16 TF32 FP8 FP4 compile tritonTC"
	mi200  = "TC FP16 BF16 compile tritonTC"
	mi300  = "TC FP16 BF16 TF32 FP8 compile tritonTC"
)

func TestLookup(t *testing.T) {
	tests := []struct {
		name         string
		major, minor int
		platform     string
		// want
		known    bool
		vendor   string
		arch     string
		caps     string
		peak     float64
		mem      float64
		inferred bool
	}{
		// The device names of the shared traces, with the CC they carry.
		{"NVIDIA A100-PG509-200", 8, 0, "cuda", true, "nvidia", "sm_80", amp, 312, 0, false},
		{"NVIDIA A100-SXM4-80GB", 8, 0, "cuda", true, "nvidia", "sm_80", amp, 312, 2.039, false},
		{"Tesla V100-SXM2-32GB", 7, 0, "cuda", true, "nvidia", "sm_70", volta, 120, 0.90, false},
		{"Tesla V100-SXM2-16GB", 7, 0, "cuda", true, "nvidia", "sm_70", volta, 120, 0.90, false},
		{"Tesla V100-DGXS-32GB", 7, 0, "cuda", true, "nvidia", "sm_70", volta, 0, 0, false},
		{"Quadro GP100", 6, 0, "cuda", true, "nvidia", "sm_60", pascal, 0, 0, false},
		{"NVIDIA GeForce RTX 2080 Ti", 7, 5, "cuda", true, "nvidia", "sm_75", volta, 0, 0, false},
		{"NVIDIA H100 80GB HBM3", 9, 0, "cuda", true, "nvidia", "sm_90", fp8, 989, 3.35, false},
		{"NVIDIA H800", 9, 0, "cuda", true, "nvidia", "sm_90", fp8, 0, 0, false},
		{"NVIDIA B200", 10, 0, "cuda", true, "nvidia", "sm_100", fp4, 2250, 8.0, false},
		{"AMD Instinct MI300X", 9, 4, "rocm", true, "amd", "gfx942", mi300, 1307.4, 5.3, false},
		// The HTA MI250 toy trace: a generic name, GFXIP 9.0 (104 CUs, 64 GiB).
		{"AMD Radeon Graphics", 9, 0, "rocm", true, "amd", "gfx90a", mi200, 0, 0, true},
		// vLLM MI300X traces write an empty name with 9.4.
		{"", 9, 4, "rocm", true, "amd", "gfx942", mi300, 0, 0, true},

		// Nothing identifies the device.
		{"AMD Radeon Graphics", -1, -1, "rocm", false, "amd", "", "", 0, 0, false},
		{"", -1, -1, "", false, "", "", "", 0, 0, false},
		{"", -1, -1, "cuda", false, "nvidia", "", "", 0, 0, false},
		{"", 9, 0, "", false, "", "", "", 0, 0, false}, // 9.0 is Hopper or gfx90a: the vendor decides
		{"", 9, 0, "unknown", false, "", "", "", 0, 0, false},
		{"", 0, 0, "cuda", false, "nvidia", "", "", 0, 0, false},
		{"AMD Instinct MI100", 9, 0, "rocm", false, "amd", "", "", 0, 0, false}, // gfx908, not gfx90a
		{"AMD Radeon VII", 9, 0, "rocm", false, "amd", "", "", 0, 0, false},

		// A name not in the table: the CC decides.
		{"", 7, 0, "cuda", true, "nvidia", "sm_70", volta, 0, 0, true},
		{"", 9, 0, "cuda", true, "nvidia", "sm_90", fp8, 0, 0, true},
		{"NVIDIA Graphics Device", 10, 0, "", true, "nvidia", "sm_100", fp4, 0, 0, true},
		{"NVIDIA GeForce GTX 980", 5, 2, "cuda", true, "nvidia", "sm_52", pascal, 0, 0, true},
		{"NVIDIA GeForce RTX 3090", 8, 6, "", true, "nvidia", "sm_86", amp, 0, 0, false},
		// The trace's CC wins over a name row that disagrees with it.
		{"NVIDIA A100-SXM4-40GB", 8, 6, "cuda", true, "nvidia", "sm_86", amp, 0, 0, true},

		// Other rows.
		{"NVIDIA H100 80GB HBM3", -1, -1, "cuda", true, "nvidia", "sm_90", fp8, 989, 3.35, false},
		{"NVIDIA H100 PCIe", 9, 0, "cuda", true, "nvidia", "sm_90", fp8, 756, 2.0, false},
		{"NVIDIA H100 NVL", 9, 0, "cuda", true, "nvidia", "sm_90", fp8, 0, 0, false},
		{"NVIDIA H200", 9, 0, "cuda", true, "nvidia", "sm_90", fp8, 989, 4.8, false},
		{"NVIDIA GH200 480GB", 9, 0, "cuda", true, "nvidia", "sm_90", fp8, 0, 0, false},
		{"NVIDIA H20", 9, 0, "cuda", true, "nvidia", "sm_90", fp8, 0, 0, false},
		{"NVIDIA GB200", 10, 0, "cuda", true, "nvidia", "sm_100", fp4, 2500, 8.0, false},
		{"NVIDIA B300 SXM6 AC", 10, 3, "cuda", true, "nvidia", "sm_103", fp4, 0, 0, false},
		{"NVIDIA GeForce RTX 5090", 12, 0, "cuda", true, "nvidia", "sm_120", fp4, 209.5, 1.792, false},
		{"NVIDIA RTX PRO 6000 Blackwell Server Edition", 12, 0, "cuda", true, "nvidia", "sm_120", fp4, 0, 0, false},
		{"NVIDIA GB10", 12, 1, "cuda", true, "nvidia", "sm_121", fp4, 0, 0, false},
		{"NVIDIA GeForce RTX 4090", 8, 9, "cuda", true, "nvidia", "sm_89", fp8, 165, 1.008, false},
		{"NVIDIA L4", 8, 9, "cuda", true, "nvidia", "sm_89", fp8, 121, 0.30, false},
		{"NVIDIA L40S", 8, 9, "cuda", true, "nvidia", "sm_89", fp8, 0, 0, false},
		{"NVIDIA RTX 6000 Ada Generation", 8, 9, "cuda", true, "nvidia", "sm_89", fp8, 0, 0, false},
		{"NVIDIA RTX A6000", 8, 6, "cuda", true, "nvidia", "sm_86", amp, 0, 0, false},
		{"Quadro RTX 6000", 7, 5, "cuda", true, "nvidia", "sm_75", volta, 0, 0, false},
		{"NVIDIA A10", 8, 6, "cuda", true, "nvidia", "sm_86", amp, 125, 0.6, false},
		{"NVIDIA RTX A1000 6GB Laptop GPU", 8, 6, "cuda", true, "nvidia", "sm_86", amp, 0, 0, false}, // an RTX A-series, not an A100
		{"NVIDIA RTX A1000 6GB Laptop GPU", -1, -1, "cuda", true, "nvidia", "sm_86", amp, 0, 0, false},
		{"NVIDIA A10G", 8, 6, "cuda", true, "nvidia", "sm_86", amp, 0, 0, false},
		{"NVIDIA A30", 8, 0, "cuda", true, "nvidia", "sm_80", amp, 165, 0.933, false},
		{"NVIDIA A100-PCIE-40GB", 8, 0, "cuda", true, "nvidia", "sm_80", amp, 312, 1.555, false},
		{"Tesla T4", 7, 5, "cuda", true, "nvidia", "sm_75", volta, 65, 0.32, false},
		{"NVIDIA GeForce GTX 1660 SUPER", 7, 5, "cuda", true, "nvidia", "sm_75", "compile", 0, 0, false},
		{"Tesla P100-SXM2-16GB", 6, 0, "cuda", true, "nvidia", "sm_60", pascal, 0, 0.732, false},
		{"Tesla P40", 6, 1, "cuda", true, "nvidia", "sm_61", pascal, 0, 0, false},
		{"NVIDIA GeForce GTX 1080 Ti", 6, 1, "cuda", true, "nvidia", "sm_61", pascal, 0, 0, false},
		{"AMD Instinct MI250X / MI250", 9, 0, "rocm", true, "amd", "gfx90a", mi200, 0, 1.6, false},
		{"AMD Instinct MI250X", 9, 0, "rocm", true, "amd", "gfx90a", mi200, 191.5, 1.6, false},
		{"AMD Instinct MI250", 9, 0, "rocm", true, "amd", "gfx90a", mi200, 181.05, 1.6, false},
		{"AMD Instinct MI210", 9, 0, "rocm", true, "amd", "gfx90a", mi200, 0, 0, false},
		{"AMD Instinct MI325X", 9, 4, "rocm", true, "amd", "gfx942", mi300, 1307.4, 6.0, false},
		{"AMD Instinct MI300A", 9, 4, "rocm", true, "amd", "gfx942", mi300, 0, 0, false},
		// The name's vendor words keep it off the other vendor's rows.
		{"AMD Radeon A2", 11, 0, "rocm", false, "amd", "", "", 0, 0, false},
		// The name decides the vendor over the platform.
		{"AMD Instinct MI300X", 9, 4, "cuda", true, "amd", "gfx942", mi300, 1307.4, 5.3, false},
	}
	for _, tc := range tests {
		c := Lookup(tc.name, tc.major, tc.minor, tc.platform)
		id := tc.name + "/" + tc.platform
		if c.Known != tc.known || c.Vendor != tc.vendor || c.Arch != tc.arch || c.Inferred != tc.inferred {
			t.Errorf("Lookup(%q, %d, %d, %q) = known %v vendor %q arch %q inferred %v, want %v %q %q %v",
				tc.name, tc.major, tc.minor, tc.platform, c.Known, c.Vendor, c.Arch, c.Inferred, tc.known, tc.vendor, tc.arch, tc.inferred)
			continue
		}
		if got := capSet(c); got != tc.caps {
			t.Errorf("Lookup(%q, %d, %d) caps = %q, want %q", tc.name, tc.major, tc.minor, got, tc.caps)
		}
		if c.PeakTFLOPs != tc.peak || c.MemTBs != tc.mem {
			t.Errorf("Lookup(%q) peak, mem = %g, %g, want %g, %g", id, c.PeakTFLOPs, c.MemTBs, tc.peak, tc.mem)
		}
		wantMajor, wantMinor := tc.major, tc.minor
		if wantMajor <= 0 {
			wantMajor, wantMinor = -1, -1
		}
		if c.CCMajor != wantMajor || c.CCMinor != wantMinor {
			t.Errorf("Lookup(%q) CC = %d.%d, want %d.%d (as given)", id, c.CCMajor, c.CCMinor, wantMajor, wantMinor)
		}
		if c.Known && (c.Family == "" || c.Source == "") {
			t.Errorf("Lookup(%q): a known device without Family or Source: %+v", id, c)
		}
	}
}

// gib is n GiB as a driver reports it: a little less (the MI300X traces'
// 206141652992 bytes are 191.98 GiB).
func gib(n float64) int64 { return int64(n*(1<<30)) - 20<<20 }

// TestIdentify checks the inference from the properties other than the
// name: a part is named only where one fits the GFXIP version, CU count
// and memory; where several fit they are listed and none is chosen, and
// where none fits the GFXIP version alone speaks (the arch, no model).
func TestIdentify(t *testing.T) {
	tests := []struct {
		what string
		p    Props
		// want
		known      bool
		family     string
		arch       string
		caps       string
		peak, mem  float64
		inferred   bool
		model      string
		candidates string
	}{
		// The AMD traces of the shared collection.
		{"vLLM MI300X traces: empty name", Props{"", 9, 4, 304, 206141652992, "rocm"},
			true, "CDNA3 (MI300X/MI325X)", "gfx942", mi300, 1307.4, 5.3, false, "MI300X", ""},
		{"HTA MI250 toy: generic name, an MI210 and an MI250 GCD look alike", Props{"AMD Radeon Graphics", 9, 0, 104, 68702699520, "rocm"},
			true, "CDNA2 (MI210/MI250/MI250X)", "gfx90a", mi200, 0, 0, true, "", "MI250 MI210"},
		{"a name that identifies the part decides", Props{"AMD Instinct MI300X", 9, 4, 304, 206141652992, "rocm"},
			true, "CDNA3 (MI300X/MI325X)", "gfx942", mi300, 1307.4, 5.3, false, "", ""},
		{"the name decides over the properties", Props{"AMD Instinct MI300X", 9, 4, 228, gib(128), "rocm"},
			true, "CDNA3 (MI300X/MI325X)", "gfx942", mi300, 1307.4, 5.3, false, "", ""},

		// gfx942.
		{"MI325X: 304 CUs and 256 GiB", Props{"", 9, 4, 304, gib(256), "rocm"},
			true, "CDNA3 (MI300X/MI325X)", "gfx942", mi300, 1307.4, 6.0, false, "MI325X", ""},
		{"MI300X under a generic name", Props{"AMD Radeon Graphics", 9, 4, 304, gib(192), "rocm"},
			true, "CDNA3 (MI300X/MI325X)", "gfx942", mi300, 1307.4, 5.3, false, "MI300X", ""},
		{"304 CUs without memory: MI300X or MI325X", Props{"", 9, 4, 304, 0, "rocm"},
			true, "CDNA3 (MI300X/MI325X)", "gfx942", mi300, 0, 0, true, "", "MI325X MI300X"},
		{"MI300A: 228 CUs", Props{"", 9, 4, 228, gib(128), "rocm"},
			true, "CDNA3 (MI300X/MI325X)", "gfx942", mi300, 0, 0, false, "MI300A", ""},
		{"MI300A: 228 CUs, whatever the shared memory reads", Props{"", 9, 4, 228, gib(110), "rocm"},
			true, "CDNA3 (MI300X/MI325X)", "gfx942", mi300, 0, 0, false, "MI300A", ""},
		{"a partitioned MI300X (152 CUs, 96 GiB): the arch only", Props{"", 9, 4, 152, gib(96), "rocm"},
			true, "CDNA3 (gfx942, from GFXIP 9.4)", "gfx942", mi300, 0, 0, true, "", ""},
		{"304 CUs with a memory no part has: the arch only", Props{"", 9, 4, 304, gib(128), "rocm"},
			true, "CDNA3 (gfx942, from GFXIP 9.4)", "gfx942", mi300, 0, 0, true, "", ""},

		// gfx90a and the older GFXIP 9.0 parts.
		{"one GCD of an MI250X: 110 CUs", Props{"AMD Radeon Graphics", 9, 0, 110, gib(64), "rocm"},
			true, "CDNA2 (MI210/MI250/MI250X)", "gfx90a", mi200, 191.5, 1.6, false, "MI250X", ""},
		{"MI100 is gfx908, not CDNA2", Props{"", 9, 0, 120, gib(32), "rocm"},
			false, "AMD device not in the table", "gfx908", "", 0, 0, false, "MI100", ""},
		{"60 CUs and 16 GiB: three gfx906 parts", Props{"", 9, 0, 60, gib(16), "rocm"},
			false, "AMD device not in the table", "gfx906", "", 0, 0, false, "", "MI50 16GB Radeon Pro VII Radeon VII"},
		{"64 CUs without memory: MI60 (gfx906) or MI25 (gfx900)", Props{"", 9, 0, 64, 0, "rocm"},
			false, "AMD device not in the table", "", "", 0, 0, false, "", "MI60 MI25"},
		{"GFXIP 9.0 with a CU count no part has: taken as gfx90a", Props{"", 9, 0, 96, gib(64), "rocm"},
			true, "CDNA2 (gfx90a, from GFXIP 9.0)", "gfx90a", mi200, 0, 0, true, "", ""},

		// gfx950: the two parts look alike; no capability row.
		{"MI350 series: 256 CUs, 288 GiB", Props{"", 9, 5, 256, gib(288), "rocm"},
			false, "CDNA4 (MI350X/MI355X)", "gfx950", "", 0, 0, false, "", "MI355X MI350X"},
		{"GFXIP 9.5 alone: the arch", Props{"", 9, 5, 0, 0, "rocm"},
			false, "CDNA4 (gfx950, from GFXIP 9.5)", "gfx950", "", 0, 0, false, "", ""},
		{"a named MI355X: the arch, capabilities unknown", Props{"AMD Instinct MI355X", 9, 5, 256, gib(288), "rocm"},
			false, "CDNA4 (MI350X/MI355X)", "gfx950", "", 0, 0, false, "", ""},

		// What does not identify an AMD part.
		{"no GFXIP version: no guess", Props{"", -1, -1, 304, gib(192), "rocm"},
			false, "", "", "", 0, 0, false, "", ""},
		{"no vendor: no guess", Props{"", 9, 4, 304, gib(192), ""},
			false, "", "", "", 0, 0, false, "", ""},
		{"NVIDIA: the SM count is not read", Props{"", 9, 0, 132, gib(80), "cuda"},
			true, "sm_90", "sm_90", fp8, 0, 0, true, "", ""},
	}
	for _, tc := range tests {
		c := Identify(tc.p)
		if c.Known != tc.known || c.Family != tc.family || c.Arch != tc.arch || c.Inferred != tc.inferred {
			t.Errorf("%s: known %v family %q arch %q inferred %v, want %v %q %q %v",
				tc.what, c.Known, c.Family, c.Arch, c.Inferred, tc.known, tc.family, tc.arch, tc.inferred)
		}
		if got := capSet(c); got != tc.caps {
			t.Errorf("%s: caps = %q, want %q", tc.what, got, tc.caps)
		}
		if c.PeakTFLOPs != tc.peak || c.MemTBs != tc.mem {
			t.Errorf("%s: peak, mem = %g, %g, want %g, %g", tc.what, c.PeakTFLOPs, c.MemTBs, tc.peak, tc.mem)
		}
		if c.Model != tc.model || strings.Join(c.Candidates, " ") != tc.candidates {
			t.Errorf("%s: model %q candidates %q, want %q %q", tc.what, c.Model, c.Candidates, tc.model, tc.candidates)
		}
		if (c.Model != "" || len(c.Candidates) > 0) != (c.From != "") {
			t.Errorf("%s: From = %q with model %q candidates %q", tc.what, c.From, c.Model, c.Candidates)
		}
		// Without the properties, Identify is Lookup.
		if got, want := Identify(Props{Name: tc.p.Name, CCMajor: tc.p.CCMajor, CCMinor: tc.p.CCMinor, Platform: tc.p.Platform}),
			Lookup(tc.p.Name, tc.p.CCMajor, tc.p.CCMinor, tc.p.Platform); got.String() != want.String() {
			t.Errorf("%s: Identify without properties = %s, Lookup = %s", tc.what, got, want)
		}
	}
}

// TestAMDPartsAgreeWithNames checks every amdParts row against the name
// table: its model is a name the table knows, in a row of the same
// GFXIP version and arch.
func TestAMDPartsAgreeWithNames(t *testing.T) {
	for _, p := range amdParts {
		f, _ := match(p.model, "amd")
		if f == nil {
			t.Errorf("amdParts %q: no name row matches it", p.model)
			continue
		}
		if f.arch != "" && (f.arch != p.arch || f.major != p.major || f.minor != p.minor) {
			t.Errorf("amdParts %q: %s GFXIP %d.%d, its name row %q says %s %d.%d", p.model, p.arch, p.major, p.minor, f.name, f.arch, f.major, f.minor)
		}
		if p.cus <= 0 {
			t.Errorf("amdParts %q: no CU count", p.model)
		}
	}
}

// TestNeverSay checks the "never say" list of JUDGEMENT.md §1.3 on the
// devices it names.
func TestNeverSay(t *testing.T) {
	type dev struct {
		name         string
		major, minor int
		platform     string
	}
	check := func(rule string, devs []dev, bad func(Caps) bool) {
		t.Helper()
		for _, d := range devs {
			c := Lookup(d.name, d.major, d.minor, d.platform)
			if !c.Known {
				t.Errorf("%s: Lookup(%q, %d, %d) is unknown, want known", rule, d.name, d.major, d.minor)
				continue
			}
			if bad(c) {
				t.Errorf("%s: Lookup(%q, %d, %d, %q) = %s", rule, d.name, d.major, d.minor, d.platform, c)
			}
		}
	}
	preAmpere := []dev{
		{"Tesla V100-SXM2-32GB", 7, 0, "cuda"}, {"Tesla T4", 7, 5, "cuda"}, {"NVIDIA GeForce RTX 2080 Ti", 7, 5, "cuda"},
		{"Quadro GP100", 6, 0, "cuda"}, {"Tesla P100-PCIE-16GB", 6, 0, "cuda"}, {"Tesla P40", 6, 1, "cuda"},
		{"", 7, 0, "cuda"}, {"", 7, 5, "cuda"},
	}
	check("no BF16/TF32 below CC 8.0", preAmpere, func(c Caps) bool { return c.BF16 || c.TF32 })
	check("no Triton tensor-core dot below CC 8.0", preAmpere, func(c Caps) bool { return c.TritonTC })

	noFP8 := append([]dev{
		{"NVIDIA A100-PG509-200", 8, 0, "cuda"}, {"NVIDIA A100-SXM4-80GB", 8, 0, "cuda"}, {"NVIDIA A10", 8, 6, "cuda"},
		{"NVIDIA A30", 8, 0, "cuda"}, {"", 8, 6, "cuda"},
		{"AMD Instinct MI250X", 9, 0, "rocm"}, {"AMD Instinct MI210", 9, 0, "rocm"}, {"AMD Radeon Graphics", 9, 0, "rocm"},
		{"", 9, 0, "rocm"},
	}, preAmpere...)
	check("no FP8 below CC 8.9 or on MI200", noFP8, func(c Caps) bool { return c.FP8 })

	check("no tensor cores on Pascal", []dev{{"Quadro GP100", 6, 0, "cuda"}, {"Tesla P100-SXM2-16GB", 6, 0, "cuda"}, {"", 6, 1, "cuda"}},
		func(c Caps) bool { return c.TensorCores || c.FP16TC })
	check("no torch.compile below CC 7.0", []dev{{"Quadro GP100", 6, 0, "cuda"}, {"Tesla P100-SXM2-16GB", 6, 0, "cuda"}, {"", 6, 1, "cuda"}},
		func(c Caps) bool { return c.Compile })

	notHopper := []dev{
		{"AMD Instinct MI300X", 9, 4, "rocm"}, {"", 9, 4, "rocm"}, {"AMD Radeon Graphics", 9, 0, "rocm"}, {"", 9, 0, "rocm"},
		{"AMD Instinct MI300X", 9, 4, ""}, {"AMD Radeon Graphics", 9, 0, "cuda"},
	}
	check("computeMajor 9 on ROCm is not Hopper", notHopper, func(c Caps) bool {
		return c.Vendor != "amd" || strings.HasPrefix(c.Arch, "sm_") || strings.Contains(c.Family, "Hopper")
	})

	preBlackwell := append([]dev{
		{"NVIDIA H100 80GB HBM3", 9, 0, "cuda"}, {"NVIDIA H800", 9, 0, "cuda"}, {"NVIDIA GeForce RTX 4090", 8, 9, "cuda"},
		{"AMD Instinct MI300X", 9, 4, "rocm"}, {"AMD Instinct MI325X", 9, 4, "rocm"}, {"", 9, 4, "rocm"}, {"", 9, 0, "cuda"},
	}, noFP8...)
	check("no FP4 before Blackwell or on MI300", preBlackwell, func(c Caps) bool { return c.FP4 })

	check("one MI250 device is one GCD, not the 362 TFLOP/s OAM", []dev{{"AMD Instinct MI250", 9, 0, "rocm"}, {"AMD Instinct MI250X", 9, 0, "rocm"}},
		func(c Caps) bool { return c.PeakTFLOPs >= 362 || c.MemTBs > 1.6 })
	for _, cus := range []int{104, 110} {
		if c := Identify(Props{"AMD Radeon Graphics", 9, 0, cus, gib(64), "rocm"}); c.PeakTFLOPs >= 362 || c.MemTBs > 1.6 || c.FP8 || strings.Contains(c.Family, "Hopper") {
			t.Errorf("GFXIP 9.0 with %d CUs: %s", cus, c)
		}
	}
	if c := Identify(Props{"", 9, 4, 304, gib(192), "rocm"}); c.FP4 || c.Vendor != "amd" || strings.HasPrefix(c.Arch, "sm_") {
		t.Errorf("an MI300X identified by its properties: %s", c)
	}
}

// TestTableAgreesWithCC checks every NVIDIA row against the capabilities
// its CC gives (the rules of JUDGEMENT.md §1.3), and the AMD rows derived
// from a GFXIP version against the named rows of the same target.
func TestTableAgreesWithCC(t *testing.T) {
	for _, f := range table {
		if len(f.parts) == 0 {
			t.Errorf("row %q has no name pattern", f.name)
		}
		if !f.known || f.vendor != "nvidia" {
			continue
		}
		got := Caps{}
		got.fill(&f)
		want := fromCC(Caps{CCMajor: f.major, CCMinor: f.minor})
		if f.name == "Turing without tensor cores (GTX 16xx)" {
			want.TensorCores, want.FP16TC = false, false
		}
		if capSet(got) != capSet(want) {
			t.Errorf("row %q (CC %d.%d) = %q, its CC gives %q", f.name, f.major, f.minor, capSet(got), capSet(want))
		}
		if got.Arch != want.Arch {
			t.Errorf("row %q arch = %q, its CC gives %q", f.name, got.Arch, want.Arch)
		}
	}
	for _, d := range []family{cdna2Derived, cdna3Derived} {
		for _, f := range table {
			if f.known && f.arch == d.arch && (f.caps != d.caps || f.major != d.major || f.minor != d.minor) {
				t.Errorf("derived row %q disagrees with %q", d.name, f.name)
			}
		}
	}
}

func TestString(t *testing.T) {
	tests := []struct {
		c    Caps
		want string
	}{
		{Lookup("Tesla V100-SXM2-32GB", 7, 0, "cuda"),
			"Volta (V100) sm_70 (CC 7.0): tensor cores FP16; no BF16, TF32, FP8, FP4; torch.compile yes, Triton tensor-core dot no; 120 TFLOP/s dense; 0.9 TB/s"},
		{Lookup("Quadro GP100", 6, 0, "cuda"),
			"Pascal (P100/GP100) sm_60 (CC 6.0): no tensor cores; torch.compile no, Triton tensor-core dot no"},
		{Lookup("AMD Radeon Graphics", 9, 0, "rocm"),
			"CDNA2 (gfx90a, from GFXIP 9.0) gfx90a (GFXIP 9.0): tensor cores FP16, BF16; no TF32, FP8, FP4; torch.compile yes, Triton tensor-core dot yes (from the CC alone)"},
		{Lookup("", 8, 9, "cuda"),
			"sm_89 (CC 8.9): tensor cores FP16, BF16, TF32, FP8; no FP4; torch.compile yes, Triton tensor-core dot yes (from the CC alone)"},
		{Lookup("", -1, -1, ""), "unknown device, no CC: capabilities unknown"},
		{Lookup("AMD Instinct MI100", 9, 0, "rocm"), "AMD device not in the table (amd), GFXIP 9.0: capabilities unknown"},
		{Identify(Props{"", 9, 4, 304, 206141652992, "rocm"}),
			"CDNA3 (MI300X/MI325X) gfx942 (GFXIP 9.4): tensor cores FP16, BF16, TF32, FP8; no FP4; torch.compile yes, Triton tensor-core dot yes; 1307.4 TFLOP/s dense; 5.3 TB/s (MI300X from GFXIP 9.4, 304 CUs, 192 GiB)"},
		{Identify(Props{"AMD Radeon Graphics", 9, 0, 104, 68702699520, "rocm"}),
			"CDNA2 (MI210/MI250/MI250X) gfx90a (GFXIP 9.0): tensor cores FP16, BF16; no TF32, FP8, FP4; torch.compile yes, Triton tensor-core dot yes (GFXIP 9.0, 104 CUs, 64 GiB fit MI250 or MI210; the model is not known)"},
		{Identify(Props{"", 9, 5, 256, 309237645312, "rocm"}),
			"CDNA4 (MI350X/MI355X) gfx950 (amd), GFXIP 9.5: capabilities unknown (GFXIP 9.5, 256 CUs, 288 GiB fit MI355X or MI350X; the model is not known)"},
	}
	for _, tc := range tests {
		if got := tc.c.String(); got != tc.want {
			t.Errorf("String() = %q\nwant       %q", got, tc.want)
		}
	}
}

// MinCCFromKernels reads the newest architecture a rank's library kernels
// were written for: a lower bound on its compute capability
// (sampled_2of128 names no device, but runs ampere_sgemm and CUTLASS sm80
// kernels).
func TestMinCCFromKernels(t *testing.T) {
	for _, c := range []struct {
		names        []string
		major, minor int
		kernel       string
		ok           bool
	}{
		{[]string{"ampere_sgemm_128x64_nn", "void cutlass::Kernel<cutlass_80_tensorop_s1688gemm_128x128_32x3_nn_align4>(Params)"}, 8, 0, "ampere_sgemm_128x64_nn", true},
		{[]string{"volta_sgemm_128x64_nn", "turing_fp16_s1688gemm_fp16_128x128_ldg8_f2f_tn"}, 7, 5, "turing_fp16_s1688gemm_fp16_128x128_ldg8_f2f_tn", true},
		{[]string{"sm90_xmma_gemm_bf16bf16_bf16f32_f32_tn_n_tilesize128x128x64_warpgroupsize1x1x1", "volta_sgemm_32x32_sliced1x4_nn"}, 9, 0, "sm90_xmma_gemm_bf16bf16_bf16f32_f32_tn_n_tilesize128x128x64_warpgroupsize1x1x1", true},
		{[]string{"void cutlass::device_kernel<sm100_gemm>()"}, 10, 0, "void cutlass::device_kernel<sm100_gemm>()", true},
		// No architecture in a name: a generic kernel, Triton's, or a word
		// that only contains one (hamperes).
		{[]string{"void at::native::vectorized_elementwise_kernel<4, at::native::GeluCUDAKernelImpl>", "triton_poi_fused_add_0", "ncclDevKernel_AllReduce_Sum_f32_RING_LL", "hamperes_kernel"}, 0, 0, "", false},
		{nil, 0, 0, "", false},
	} {
		major, minor, kernel, ok := MinCCFromKernels(c.names)
		if major != c.major || minor != c.minor || kernel != c.kernel || ok != c.ok {
			t.Errorf("MinCCFromKernels(%q) = %d.%d %q %v, want %d.%d %q %v", c.names, major, minor, kernel, ok, c.major, c.minor, c.kernel, c.ok)
		}
	}
}
