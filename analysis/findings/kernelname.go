package findings

// Kernel names as a reader reads them: KernelName (an observation, a
// chart's axis, the next lever) and KernelTemplate (what tells apart two
// kernels KernelName names alike). The trace's own names stay in the
// tables and the call tree, where a reader searches for them.

import (
	"strings"

	"github.com/tracebook/tracebook/analysis/internal/rx"
)

// KernelName is the readable name of a GPU kernel, for an observation, a
// chart's axis or the next lever: without a leading "void", the
// "(anonymous namespace)::" qualifiers and the parameter list; for
// PyTorch's templated at::native kernels the kernel and the functor or op
// it runs ("vectorized_elementwise_kernel (sigmoid_kernel_cuda)"), or the
// kernel alone where its arguments name no op ("cunn_SoftMaxForward");
// for a wrapper template around one generated kernel
// (cutlass::Kernel2<X>, cutlass::device_kernel<X>, ck_tile::kentry<N, X,
// ...>), the kernel X. A name the trace writes mangled (HIP traces do:
// _ZN5aiter24add_rmsnorm_quant_kernelI…) is named by its qualified name,
// without the template arguments, which run to thousands of characters
// in Composable Kernel's pipelines ("aiter::add_rmsnorm_quant_kernel",
// "ck_tile::Rmsnorm2dFwd"), but for the function one of them names
// ("vllm::act_and_mul_kernel (silu_kernel)"). A Tensile GEMM (Cijk_…,
// hipBLASLt's and rocBLAS's) is named up to its macro tile and matrix
// instruction, the fields that tell its variants apart
// ("Cijk_Alik_Bljk_BBS_BH_Bias_HA_S_SAV_UserArgs_MT128x256x32_MI16x16x1"),
// without the tuning parameters that follow. A GPU copy or memset keeps
// its whole name, which says its memory kinds.
func KernelName(n string) string {
	if strings.HasPrefix(n, "Memcpy ") || strings.HasPrefix(n, "Memset ") {
		return n // "Memcpy DtoH (Device -> Pageable)": its memory kinds
	}
	if t, ok := tensileName(n); ok {
		return t
	}
	if m, ok := readMangled(n); ok {
		return m.label()
	}
	full := n
	n = bareKernel(n)
	label := ""
	if i := strings.IndexByte(n, '<'); i > 0 && strings.Contains(full, "at::native::") {
		base := n[:i]
		if j := strings.LastIndex(base, "::"); j >= 0 {
			base = base[j+2:]
		}
		label = base
		for _, m := range opRE.FindAllString(n[i:], -1) {
			if !genericOps[m] {
				label = base + " (" + m + ")"
				break
			}
		}
	}
	if label != "" {
		return label
	}
	if out := unwrapped(withoutParams(n)); out != "" {
		return out
	}
	return full // a name that is all parameter list: as written
}

// tensileName is a Tensile kernel's name up to its matrix instruction
// field (MI…), which follows the macro tile (MT…); ok is false for a name
// that is not a Tensile kernel's.
func tensileName(n string) (string, bool) {
	if !strings.HasPrefix(n, "Cijk_") {
		return "", false
	}
	mt := strings.Index(n, "_MT")
	if mt < 0 {
		return "", false
	}
	mi := strings.Index(n[mt:], "_MI")
	if mi < 0 {
		return "", false
	}
	end := mt + mi + len("_MI")
	for end < len(n) && n[end] != '_' {
		end++
	}
	return n[:end], true
}

// unwrapped is the kernel a wrapper template runs (kernelWrappers), or n
// when n is no wrapper.
func unwrapped(n string) string {
	for _, w := range kernelWrappers {
		if inner, ok := strings.CutPrefix(n, w+"<"); ok && strings.HasSuffix(inner, ">") && topLevel(inner[:len(inner)-1], ',', 0) < 0 {
			return strings.TrimSpace(strings.TrimSuffix(inner, ">"))
		}
	}
	return n
}

// KernelTemplate is a kernel's name with its template arguments: without
// a leading "void", the "(anonymous namespace)::" and "at::native::"
// qualifiers and the parameter list. It tells apart kernels that
// KernelName names alike (one op on a tensor and a scalar, or on two
// tensors). A mangled kernel's arguments are read where they are builtin
// types, their literals and names ("aiter::add_rmsnorm_quant_kernel<bf16,
// bf16, 64, 8, false, false, true, 1>"); where they are not, it is the
// name as the trace writes it.
func KernelTemplate(n string) string {
	if m, ok := readMangled(n); ok {
		if t := m.template(); t != "" {
			return t
		}
	}
	return withoutParams(strings.ReplaceAll(bareKernel(n), "at::native::", ""))
}

// bareKernel is a kernel name without its return type (a leading "void",
// or vLLM's "std::enable_if<…>::type vllm::rms_norm_kernel<…>(…)": in a
// name with a parameter list, what comes before the last space outside
// template arguments and parentheses ahead of it) and its
// "(anonymous namespace)::" qualifiers.
func bareKernel(n string) string {
	n = strings.ReplaceAll(strings.TrimPrefix(n, "void "), "(anonymous namespace)::", "")
	if p := topLevel(n, '(', 1); p > 0 {
		if i := topLevelLast(n[:p], ' '); i >= 0 && strings.TrimSpace(n[i:p]) != "" {
			n = n[i+1:] // a signature's return type: only where a parameter list follows
		}
	}
	return n
}

// kernelWrappers are templates that run the kernel their argument names
// (CUTLASS's kernel entry points, those of cuDNN's own copy of CUTLASS,
// Composable Kernel's ck_tile::kentry): KernelName names that argument.
// Written out, a wrapper runs its one argument (one with more arguments
// is none); mangled, it runs its first template argument that is a type
// (ck_tile::kentry's block count comes first, the kernel's argument
// types after it).
var kernelWrappers = []string{"cutlass::Kernel", "cutlass::Kernel2", "cutlass::device_kernel", "cutlass_cudnn_train::Kernel", "ck_tile::kentry"}

// topLevel is the index of the first byte c of s, at or past from, that
// lies outside template arguments and parentheses; -1 for none. Inside
// parentheses < and > compare (enable_if<(((8)>(0)))…>): they open and
// close no template arguments.
func topLevel(s string, c byte, from int) int {
	first := -1
	scanTopLevel(s, func(i int) bool {
		if s[i] == c && i >= from {
			first = i
			return false
		}
		return true
	})
	return first
}

// topLevelLast is the index of the last byte c of s outside template
// arguments and parentheses; -1 for none.
func topLevelLast(s string, c byte) int {
	last := -1
	scanTopLevel(s, func(i int) bool {
		if s[i] == c {
			last = i
		}
		return true
	})
	return last
}

// scanTopLevel calls at with the index of each byte of s that lies
// outside template arguments and parentheses (an opening bracket itself
// included), until at returns false.
func scanTopLevel(s string, at func(i int) bool) {
	angle, paren := 0, 0
	for i := 0; i < len(s); i++ {
		if angle == 0 && paren == 0 && !at(i) {
			return
		}
		switch b := s[i]; {
		case b == '(':
			paren++
		case b == ')':
			paren = max(paren-1, 0)
		case paren > 0:
		case b == '<':
			angle++
		case b == '>':
			angle = max(angle-1, 0)
		}
	}
}

// withoutParams cuts a kernel name at its parameter list: the first "("
// outside template arguments that is not its first byte.
func withoutParams(n string) string {
	if i := topLevel(n, '(', 1); i > 0 {
		return strings.TrimSpace(n[:i])
	}
	return n
}

var (
	// opRE: the functor or op a templated at::native kernel runs.
	opRE       = rx.MustCompile(`[A-Za-z_][A-Za-z0-9_]*(Functor[A-Za-z0-9_]*|_functor|Ops|KernelImpl|_kernel_cuda|_kernel_impl|_kernel)\b|launch_[a-z_]+|copy_device_to_device`)
	genericOps = map[string]bool{"BinaryFunctor": true, "AUnaryFunctor": true, "BUnaryFunctor": true, "UnaryFunctor": true,
		"gpu_kernel_impl": true, "gpu_kernel_impl_nocast": true, "ReduceOp": true, "func_wrapper_t": true, "elementwise_kernel": true,
		"vectorized_elementwise_kernel": true, "unrolled_elementwise_kernel": true, "reduce_kernel": true}
)
