package rx

import (
	"regexp"
	"slices"
	"testing"
)

// patterns are the core's patterns (and the syntax around them): each is
// matched as regexp matches it.
var patterns = []string{
	// analysis/crossview: wait frames, python frame names, addresses.
	`shm_broadcast\.py\(\d+\): (dequeue|acquire_read)`,
	`(^|[^A-Za-z_])sched_yield`,
	`threading\.py\(\d+\): wait$`,
	`queue\.py\(\d+\): get$`,
	`^<built-in (function|method) (sleep|select|poll|epoll|recv|recv_multipart|acquire)[ >]`,
	`selectors\.py\(\d+\): select$`,
	`zmq/sugar/(poll|socket)\.py\(\d+\): (poll|recv|recv_multipart)$`,
	`dataloader\.py\(\d+\): _(try_)?get_data$`,
	`(^|/)torch/autograd/profiler\.py\(\d+\): __enter__$`,
	` at 0x[0-9a-fA-F]+`,
	// analysis/device: GPU model names.
	`(?i)\bA100-SXM4?-80GB`,
	`(?i)\bA100\b.*\b40GB`,
	`(?i)\bA100([^0-9]|$)`,
	`(?i)\bQuadro P[0-9]{3,4}\b`,
	`(?i)\bMI30[08][AX]?\b`,
	`(?i)\bMI(6|8|25|50|60|100)\b`,
	`(?i)\bRadeon (Pro )?VII\b`,
	`(?i)\bH100\b.*\b(HBM3|SXM)`,
	`(?i)\bMI250X / MI250\b`,
	// analysis/findings: SIMT GEMMs, the op of an elementwise kernel.
	`(?i)(^|[^a-z])sgemm|(^|[^a-z]|g)cgemm|gemv|gemmsn|gemmk1`,
	`[A-Za-z_][A-Za-z0-9_]*(Functor[A-Za-z0-9_]*|_functor|Ops|KernelImpl|_kernel_cuda|_kernel_impl|_kernel)\b|launch_[a-z_]+|copy_device_to_device`,
	// analysis/report and analysis/diff.
	`(\d+(?:\.\d+)?)%`, `\d+(?:\.\d+)?%`,
	`[0-9]+`,
	`^other \([0-9]+ nodes?\)$`,
	// Syntax the patterns above do not use.
	`a{2,}b+c*`, `x.?y`, `[\]\-a]+`, `^$`, `a|`, `(a|ab)(c|bcd)(d*)`,
}

var inputs = []string{
	"", "a", "aab", "xay", "x y", "]-a", "abcd", "ab", "abbcd",
	"vllm/distributed/device_communicators/shm_broadcast.py(474): dequeue",
	"shm_broadcast.py(x): dequeue", "os.sched_yield", "_sched_yield", "sched_yield",
	"threading.py(320): wait", "threading.py(320): wait_for", "queue.py(12): get", "<built-in method recv_multipart of Socket object>",
	"<built-in function sleep>", "<built-in function sleeper>", "selectors.py(468): select", "zmq/sugar/socket.py(801): recv_multipart",
	"torch/utils/data/dataloader.py(1133): _try_get_data", "dataloader.py(1): _get_data", "torch/autograd/profiler.py(759): __enter__",
	"x/torch/autograd/profiler.py(7): __enter__", "xtorch/autograd/profiler.py(7): __enter__",
	"<bound method f of Obj at 0x7bc2e88c4500>", "at 0x", " at 0xZZ",
	"NVIDIA A100-SXM4-80GB", "NVIDIA A100-SXM-80GB", "a100 PCIE 40gb", "NVIDIA A1000", "A100", "NVIDIA A100-PCIE-40GB",
	"Quadro P5000", "Quadro P400", "Quadro P50000", "AMD Instinct MI300X", "MI308", "MI300A", "MI3000", "MI25", "mi100", "MI250X / MI250",
	"Radeon Pro VII", "Radeon VII", "Radeon Pro  VII", "NVIDIA H100 80GB HBM3", "NVIDIA H100 PCIe", "H100SXM",
	"volta_sgemm_64x64_nt", "cutlass_sgemm", "maxwell_cgemm", "zgemv2T_kernel", "gemmSN_NN_kernel", "xsgemm", "gcgemm",
	"void at::native::vectorized_elementwise_kernel<4, at::native::AddFunctor<float>, std::array<char*, 3> >(int, at::native::AddFunctor<float>, std::array<char*, 3>)",
	"void at::native::unrolled_elementwise_kernel<at::native::direct_copy_kernel_cuda(at::TensorIteratorBase&)::{lambda()#3}::operator()() const>",
	"xlaunch_foo bar copy_device_to_device", "BinaryFunctorXyz<float>", "my_functor_", "launch_", "a_kernel_cuda_x",
	"12.5% of 40% and 7%", "100%", "3.%", "other (12 nodes)", "other (1 node)", "other (1 nodes) ", "other ( nodes)",
	"héllo wörld 12 ∑ sched_yield", "é at 0xAb",
}

func TestMatchesRegexp(t *testing.T) {
	for _, p := range patterns {
		want := regexp.MustCompile(p)
		got := MustCompile(p)
		for _, s := range inputs {
			if g, w := got.MatchString(s), want.MatchString(s); g != w {
				t.Errorf("%q on %q: MatchString %v, regexp %v", p, s, g, w)
			}
			if g, w := got.ReplaceAllLiteralString(s, "N"), want.ReplaceAllLiteralString(s, "N"); g != w {
				t.Errorf("%q on %q: ReplaceAllLiteralString %q, regexp %q", p, s, g, w)
			}
			for _, n := range []int{-1, 1} {
				if g, w := got.FindAllString(s, n), want.FindAllString(s, n); !slices.Equal(g, w) {
					t.Errorf("%q on %q: FindAllString(%d) %q, regexp %q", p, s, n, g, w)
				}
			}
		}
	}
}

// Syntax outside the subset is an error, never a different meaning.
func TestCompileRejects(t *testing.T) {
	for _, p := range []string{`(?s)a`, `a(?i)b`, `\w`, `\pL`, `[[:alpha:]]`, `a**`, `a*?`, `(a`, `a)`, `[a`, `{2}`, `a{3,1}`, `\`, `[z-a]`, `a{2000}`} {
		if _, err := Compile(p); err == nil {
			t.Errorf("Compile(%q) accepted it", p)
		}
	}
}

// FuzzMatchesRegexp: on any text, every pattern matches as regexp does.
func FuzzMatchesRegexp(f *testing.F) {
	for i, s := range inputs {
		f.Add(uint8(i), s)
	}
	f.Fuzz(func(t *testing.T, k uint8, s string) {
		p := patterns[int(k)%len(patterns)]
		if g, w := MustCompile(p).MatchString(s), regexp.MustCompile(p).MatchString(s); g != w {
			t.Errorf("%q on %q: MatchString %v, regexp %v", p, s, g, w)
		}
		if g, w := MustCompile(p).FindAllString(s, -1), regexp.MustCompile(p).FindAllString(s, -1); !slices.Equal(g, w) {
			t.Errorf("%q on %q: FindAllString %q, regexp %q", p, s, g, w)
		}
		if g, w := MustCompile(p).ReplaceAllLiteralString(s, "N"), regexp.MustCompile(p).ReplaceAllLiteralString(s, "N"); g != w {
			t.Errorf("%q on %q: ReplaceAllLiteralString %q, regexp %q", p, s, g, w)
		}
	})
}

// Patterns outside the subset that regexp would take fail to compile here
// rather than match differently; any pattern rx takes, regexp takes.
func FuzzCompile(f *testing.F) {
	for _, p := range patterns {
		f.Add(p)
	}
	f.Fuzz(func(t *testing.T, p string) {
		re, err := Compile(p)
		if err != nil {
			return
		}
		want, err := regexp.Compile(p)
		if err != nil {
			t.Fatalf("rx takes %q, regexp does not: %v", p, err)
		}
		for _, s := range inputs[:20] {
			if g, w := re.MatchString(s), want.MatchString(s); g != w {
				t.Errorf("%q on %q: MatchString %v, regexp %v", p, s, g, w)
			}
		}
	})
}

// TestQuoteMeta: a quoted string matches itself, here and in regexp, and
// quotes as regexp quotes it.
func TestQuoteMeta(t *testing.T) {
	for _, s := range []string{"fft2d_c2r_32x32<float, false, 0u>", `a.b+c*d?e(f)g|h[i]j{k}l^m$n\o`, "", "plain"} {
		q := QuoteMeta(s)
		if q != regexp.QuoteMeta(s) {
			t.Errorf("QuoteMeta(%q) = %q, regexp quotes %q", s, q, regexp.QuoteMeta(s))
		}
		if s != "" && !MustCompile("^"+q+"$").MatchString(s) {
			t.Errorf("%q does not match %q", q, s)
		}
	}
}
