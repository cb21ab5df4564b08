package trace

import (
	"path/filepath"
	"strings"
	"testing"

	"github.com/tracebook/tracebook/analysis/device"
	"github.com/tracebook/tracebook/internal/testutil"
)

// TestFileInfoNumSMs checks GPUNumSMs: device 0's numSms as written, 0
// when absent, not a number or not positive.
func TestFileInfoNumSMs(t *testing.T) {
	events := `"traceEvents":[{"ph":"X","cat":"cpu_op","name":"a","pid":1,"tid":1,"ts":1,"dur":1}]`
	tests := []struct {
		name, doc string
		want      int
	}{
		{"rocm MI300X", `{"deviceProperties":[{"name":"","computeMajor":9,"computeMinor":4,"numSms":304,"totalGlobalMem":206141652992},{"numSms":38}],` + events + `}`, 304},
		{"cuda", `{"deviceProperties":[{"name":"NVIDIA H100 80GB HBM3","numSms":132}],` + events + `}`, 132},
		{"absent", `{"deviceProperties":[{"name":"NVIDIA H100"}],` + events + `}`, 0},
		{"not a number", `{"deviceProperties":[{"name":"NVIDIA H100","numSms":"x"}],` + events + `}`, 0},
		{"zero", `{"deviceProperties":[{"name":"NVIDIA H100","numSms":0}],` + events + `}`, 0},
		{"negative", `{"deviceProperties":[{"name":"NVIDIA H100","numSms":-4}],` + events + `}`, 0},
		{"empty list", `{"deviceProperties":[],` + events + `}`, 0},
		{"legacy array", `[{"name":"a","ph":"X","ts":1,"dur":1,"tid":1,"pid":1}]`, 0},
	}
	for _, tc := range tests {
		_, fi, err := collect(t, tc.doc, LoadOptions{})
		if err != nil {
			t.Fatalf("%s: %v", tc.name, err)
		}
		if fi.GPUNumSMs != tc.want {
			t.Errorf("%s: GPUNumSMs = %d, want %d", tc.name, fi.GPUNumSMs, tc.want)
		}
	}
}

// TestSharedAMDDevices reads the deviceProperties of the shared AMD traces
// and checks what analysis/device makes of them. The vLLM MI300X traces
// write an empty name: their GFXIP 9.4, 304 CUs and 192 GiB identify an
// MI300X and give its figures. The HTA MI250 toy's generic "AMD Radeon
// Graphics" with GFXIP 9.0, 104 CUs and 64 GiB fits one GCD of an MI250
// and an MI210 alike: gfx90a, no model. The others name their MI300X.
func TestSharedAMDDevices(t *testing.T) {
	root := testutil.SharedTraces(t)
	tests := []struct {
		set        string
		name       string // GPUModel as read
		cus        int
		model      string
		candidates string
		arch       string
		peak       float64
	}{
		{"tracelens/vllm_decode_full_mi300x", "unknown", 304, "MI300X", "", "gfx942", 1307.4},
		{"tracelens/vllm_prefilldecode_piecewise_mi300x", "unknown", 304, "MI300X", "", "gfx942", 1307.4},
		{"tracelens/vllm_graph_capture_full_mi300x", "unknown", 304, "MI300X", "", "gfx942", 1307.4},
		{"hta/amd_mi250_minitoy", "AMD Radeon Graphics", 104, "", "MI250 MI210", "gfx90a", 0},
		{"tracelens/mi300x_resnet_act_checkpoint", "AMD Instinct MI300X", 304, "", "", "gfx942", 1307.4},
		{"tracelens/sglang_qwen3_decode_mi300x", "AMD Instinct MI300X", 304, "", "", "gfx942", 1307.4},
		{"tracelens/xdit_sd35_mi300x", "AMD Instinct MI300X", 304, "", "", "gfx942", 1307.4},
		{"tracemap/vllm_mi300x_tp4_rank0", "AMD Instinct MI300X", 304, "", "", "gfx942", 1307.4},
	}
	for _, tc := range tests {
		t.Run(tc.set, func(t *testing.T) {
			files, _ := filepath.Glob(filepath.Join(root, filepath.FromSlash(tc.set), "*.json.gz"))
			if len(files) != 1 {
				t.Fatalf("%s: %d trace files, want 1", tc.set, len(files))
			}
			fi, err := ParseFile(files[0], LoadOptions{NoPython: true}, func(*Event) error { return nil }, nil)
			if err != nil {
				t.Fatal(err)
			}
			if fi.GPUModel != tc.name || fi.GPUNumSMs != tc.cus || fi.Platform != "rocm" {
				t.Fatalf("GPUModel %q, GPUNumSMs %d, Platform %q; want %q, %d, rocm", fi.GPUModel, fi.GPUNumSMs, fi.Platform, tc.name, tc.cus)
			}
			name := fi.GPUModel
			if name == "unknown" {
				name = ""
			}
			c := device.Identify(device.Props{Name: name, CCMajor: fi.CCMajor, CCMinor: fi.CCMinor, NumSMs: fi.GPUNumSMs, TotalMem: fi.GPUTotalMem, Platform: fi.Platform})
			if !c.Known || c.Vendor != "amd" || c.Arch != tc.arch || c.Model != tc.model || strings.Join(c.Candidates, " ") != tc.candidates || c.PeakTFLOPs != tc.peak {
				t.Errorf("Identify = %s: known %v vendor %q arch %q model %q candidates %q peak %g; want arch %q model %q candidates %q peak %g",
					c, c.Known, c.Vendor, c.Arch, c.Model, c.Candidates, c.PeakTFLOPs, tc.arch, tc.model, tc.candidates, tc.peak)
			}
		})
	}
}
