package findings_test

import (
	"bufio"
	"os"
	"strings"
	"testing"

	"github.com/tracebook/tracebook/analysis/findings"
)

// kernelNames reads testdata/kernel_names.tsv: real kernel names and the
// name KernelName gives each.
func kernelNames(t testing.TB) (want, names []string) {
	f, err := os.Open("testdata/kernel_names.tsv")
	if err != nil {
		t.Fatal(err)
	}
	defer f.Close()
	s := bufio.NewScanner(f)
	s.Buffer(nil, 1<<20)
	for s.Scan() {
		if strings.HasPrefix(s.Text(), "#") {
			continue
		}
		w, n, ok := strings.Cut(s.Text(), "\t")
		if !ok {
			t.Fatalf("line without a tab: %q", s.Text())
		}
		want, names = append(want, w), append(names, n)
	}
	if err := s.Err(); err != nil {
		t.Fatal(err)
	}
	return want, names
}

// TestKernelNameReal: mangled (ROCm's, cuDNN's CUTLASS) and Tensile
// kernel names from real traces, as a reader reads them.
func TestKernelNameReal(t *testing.T) {
	want, names := kernelNames(t)
	if len(names) < 10 {
		t.Fatalf("%d names in testdata/kernel_names.tsv", len(names))
	}
	for i, n := range names {
		if got := findings.KernelName(n); got != want[i] {
			t.Errorf("KernelName(%.60q…)\n got %q\nwant %q", n, got, want[i])
		}
		if got := findings.KernelName("void " + n); got != want[i] && strings.HasPrefix(n, "_Z") {
			t.Errorf("KernelName(void %.60q…) = %q, want %q", n, got, want[i])
		}
	}
}

// TestKernelNameMangledCut: a mangled name cut short, or whose parts this
// reader does not follow, keeps the name as the trace writes it.
func TestKernelNameMangledCut(t *testing.T) {
	for _, n := range []string{
		"_ZN5aiter24add_rms",      // a source name longer than what is left
		"_ZN5aiter",               // no end to the nested name
		"_ZNS_3foo",               // a substitution with nothing before it
		"_Z",                      // nothing
		"_ZN0E",                   // an empty source name
		"_ZN99999999999999999999", // a length past every string
	} {
		if got := findings.KernelName(n); got != n {
			t.Errorf("KernelName(%q) = %q, want it unchanged", n, got)
		}
	}
	// A wrapper whose argument cannot be read is named itself.
	if got, want := findings.KernelName("_ZN7ck_tile6kentryIXtlEEEvv"), "ck_tile::kentry"; got != want {
		t.Errorf("KernelName(wrapper, unread argument) = %q, want %q", got, want)
	}
}

// FuzzKernelName: any name gives a name, the same each time, and one that
// is never empty for a name that is not; KernelTemplate reads any name
// without failing.
func FuzzKernelName(f *testing.F) {
	_, names := kernelNames(f)
	for _, n := range names {
		f.Add(n)
	}
	f.Add("_ZN4vllm18act_and_mul_kernelIXadL_ZNS_4siluEEEEvv")
	f.Add("_Z6kernelIfLin3EN2ns4TileILi8EEEEvv")
	f.Fuzz(func(t *testing.T, n string) {
		got := findings.KernelName(n)
		if strings.TrimSpace(n) != "" && got == "" {
			t.Errorf("KernelName(%q) is empty", n)
		}
		if again := findings.KernelName(n); again != got {
			t.Errorf("KernelName(%q): %q, then %q", n, got, again)
		}
		if a, b := findings.KernelTemplate(n), findings.KernelTemplate(n); a != b {
			t.Errorf("KernelTemplate(%q): %q, then %q", n, a, b)
		}
	})
}

// TestKernelTemplateMangled: mangled kernels KernelName names alike are
// told apart by their template arguments where those are builtin types,
// literals and names; the others keep the name as written.
func TestKernelTemplateMangled(t *testing.T) {
	for _, c := range []struct{ in, want string }{
		{"_ZN5aiter24add_rmsnorm_quant_kernelIDF16bDF16bLi64ELi8ELb0ELb0ELb1ELi1EEEvPT0_PT_PfS4_S4_S4_diiiiiiib",
			"aiter::add_rmsnorm_quant_kernel<bf16, bf16, 64, 8, false, false, true, 1>"},
		{"_ZN5aiter24add_rmsnorm_quant_kernelIDF16bDF16bLi256ELi16ELb1ELb0ELb1ELi1EEEvPT0_PT_PfS4_S4_S4_diiiiiiib",
			"aiter::add_rmsnorm_quant_kernel<bf16, bf16, 256, 16, true, false, true, 1>"},
		{"_Z6kernelIfLin3EN2ns4TileILi8EEEEvv", "kernel<float, -3, ns::Tile<…>>"},
		// A template parameter reference (T_) is not read: as written.
		{"_ZN4vllm18act_and_mul_kernelIN3c108BFloat16ETnPFT_RKS3_EEEvv", "_ZN4vllm18act_and_mul_kernelIN3c108BFloat16ETnPFT_RKS3_EEEvv"},
	} {
		if got := findings.KernelTemplate(c.in); got != c.want {
			t.Errorf("KernelTemplate(%.50q…)\n got %q\nwant %q", c.in, got, c.want)
		}
	}
}
