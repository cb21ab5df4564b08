package sql

import (
	"strings"
	"testing"
)

// TestClassifiersHaveOneSource: no preset spells out a classifier that
// views.sql defines as a macro; each calls the macro instead.
func TestClassifiersHaveOneSource(t *testing.T) {
	// Fragments of each classifier's body, as a preset would repeat them.
	repeats := map[string]string{
		"ncclDevKernel":          "tb_comm_kernel",
		"deep_ep::":              "tb_comm_kernel",
		"'aten::item'":           "tb_scalar_read",
		"WaitEvent":              "tb_sync_call",
		"'cudaMemcpy'":           "tb_sync_call",
		"'%Async%'":              "tb_sync_call",
		"Pageable":               "tb_copy_pageable",
		"'Memcpy DtoH":           "tb_copy_waits",
		"'^Memcpy (":             "tb_copy_direction",
		"(\\w+) -> ":             "tb_copy_src",
		" -> (\\w+)":             "tb_copy_dst",
		"'kernel', 'gpu_memcpy'": "tb_gpu_work",
	}
	for _, name := range fileNames() {
		if name == viewsFile {
			continue
		}
		for i, line := range strings.Split(text(name), "\n") {
			code, _, _ := strings.Cut(line, "--")
			for frag, macro := range repeats {
				if strings.Contains(code, frag) {
					t.Errorf("%s.sql:%d repeats %q: call %s (views.sql) instead", name, i+1, frag, macro)
				}
			}
		}
	}
}
