package sql

import (
	"regexp"
	"strings"
	"testing"
)

// TestCommKernelPattern: the pattern is read from tb_comm_kernel, compiles
// in Go, and is what the macro matches (the SQL quote doubling undone).
func TestCommKernelPattern(t *testing.T) {
	if CommKernelPattern == "" {
		t.Fatal("CommKernelPattern is empty")
	}
	if _, err := regexp.Compile("(?i)" + CommKernelPattern); err != nil {
		t.Fatalf("CommKernelPattern does not compile in Go: %v", err)
	}
	want := "regexp_matches(name, '" + strings.ReplaceAll(CommKernelPattern, "'", "''") + "', 'i');"
	if !strings.Contains(Views(), want) {
		t.Errorf("views.sql has no %s", want)
	}
}

func TestMacroPattern(t *testing.T) {
	tests := []struct {
		name, src, want string
	}{
		{"plain", "CREATE OR REPLACE MACRO m(name) AS\n  regexp_matches(name, '^a|b', 'i');", "^a|b"},
		{"quote", "CREATE OR REPLACE MACRO m(x) AS regexp_matches(x, 'it''s', 'i');", "it's"},
	}
	for _, tc := range tests {
		t.Run(tc.name, func(t *testing.T) {
			if got := macroPattern(tc.src, "m"); got != tc.want {
				t.Errorf("macroPattern(%q) = %q, want %q", tc.src, got, tc.want)
			}
		})
	}
}

func TestMacroPattern_Errors(t *testing.T) {
	for _, src := range []string{
		"",
		"CREATE OR REPLACE MACRO m(name) AS regexp_matches(name, 'a', 'i') OR name = 'b';",
		"CREATE OR REPLACE MACRO m(name) AS regexp_matches(other, 'a', 'i');",
		"CREATE OR REPLACE MACRO m(name) AS regexp_matches(name, 'a');",
	} {
		func() {
			defer func() {
				if recover() == nil {
					t.Errorf("macroPattern(%q) did not panic", src)
				}
			}()
			macroPattern(src, "m")
		}()
	}
}

// TestClassifiersHaveOneSource: no preset spells out a classifier that
// views.sql defines as a macro; each calls the macro instead.
func TestClassifiersHaveOneSource(t *testing.T) {
	// Fragments of each classifier's body, as a preset would repeat them.
	repeats := map[string]string{
		CommKernelPattern: "tb_comm_kernel",
		"deep_ep::":       "tb_comm_kernel",
		"WaitEvent":       "tb_sync_call",
		"'cudaMemcpy'":    "tb_sync_call",
		"'%Async%'":       "tb_sync_call",
		"Pageable":        "tb_copy_pageable",
		"'Memcpy DtoH":    "tb_copy_waits",
		"'^Memcpy (":      "tb_copy_direction",
		"(\\w+) -> ":      "tb_copy_src",
		" -> (\\w+)":      "tb_copy_dst",
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
