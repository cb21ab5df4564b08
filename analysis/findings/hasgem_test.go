package findings

import "testing"

// TestHasGemBeforeSIMT: every name simtRE matches holds "gem" as hasGem
// sees it, so the check in front of the expression changes no verdict.
func TestHasGemBeforeSIMT(t *testing.T) {
	names := []string{
		"volta_sgemm_128x64_nn", "SGEMM", "cublasDgemv", "gemv2T_kernel", "void gemmSN_NN_kernel<float>()",
		"gemmk1_kernel", "ampere_ſgemm_64x32", "Kernel_GEMV", "x-GeMm", "sm90_xmma_gemm_bf16bf16",
		"void vllm::kernel_1<c10::BFloat16>()", "ncclDevKernel_AllReduce", "memcpy", "ge m", "GE", "",
		"elementwise_kernel<gEmM>", "dgemm", "xdgemm", "_dgemm",
	}
	for _, n := range names {
		if simtRE.MatchString(n) && !hasGem(n) {
			t.Errorf("simtRE matches %q but hasGem does not", n)
		}
	}
	for n, want := range map[string]bool{"ampere_sgemm": true, "GeMv": true, "kernel": false, "ge": false, "g\u00e9m": false} {
		if got := hasGem(n); got != want {
			t.Errorf("hasGem(%q) = %v, want %v", n, got, want)
		}
	}
}
