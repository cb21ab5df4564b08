package crossview

import "testing"

// TestFoldChain: a chain of up to three names is written whole (a frame
// between is worth its line more than "… 1 frame …"); past three, its
// first name, the count of those between and its last.
func TestFoldChain(t *testing.T) {
	for _, c := range []struct {
		chain []string
		want  string
	}{
		{nil, ""},
		{[]string{"a"}, "a"},
		{[]string{"a", "b"}, "a › b"},
		{[]string{"CudnnBatchNormBackward", "aten::cudnn_batch_norm_backward", "cudaLaunchKernel"}, "CudnnBatchNormBackward › aten::cudnn_batch_norm_backward › cudaLaunchKernel"},
		{[]string{"a", "b", "c", "d"}, "a › … 2 frames … › d"},
		{[]string{"nn.Module: X_0", "1", "2", "3", "4", "5", "aten::mm", "hipExtModuleLaunchKernel"}, "nn.Module: X_0 › … 6 frames … › hipExtModuleLaunchKernel"},
	} {
		if got := FoldChain(c.chain, " › "); got != c.want {
			t.Errorf("FoldChain(%q) = %q, want %q", c.chain, got, c.want)
		}
	}
}
