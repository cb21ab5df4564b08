package cli

import (
	"bytes"
	"encoding/json"
	"os"
	"path/filepath"
	"strings"
	"testing"

	"github.com/tracebook/tracebook/analysis/trace"
	"github.com/tracebook/tracebook/wasm"
)

// TestReportPerfetto: `tracebook report --perfetto DIR` writes the files
// the HTML report embeds, one per finding shown, each a Chrome trace that
// tracebook's importer reads back; the Markdown report names each window.
func TestReportPerfetto(t *testing.T) {
	tests := []struct {
		name  string
		paths []string
		args  []string
	}{
		{"dlrm_rank3", []string{"../testdata/param/dlrm_8rank"}, []string{"--rank", "3"}},
		{"hostile_names", []string{hostileTrace}, nil},
	}
	for _, tc := range tests {
		t.Run(tc.name, func(t *testing.T) {
			dir := t.TempDir()
			html, md, out := filepath.Join(dir, "r.html"), filepath.Join(dir, "r.md"), filepath.Join(dir, "perfetto")
			args := append(append([]string{"report"}, tc.paths...), tc.args...)
			stdout := runOK(t, append(args, "-o", html, "--md", md, "--perfetto", out)...)
			if !strings.Contains(stdout, "Perfetto file(s) to "+out) {
				t.Errorf("stdout does not say where the files went: %q", stdout)
			}
			page, err := os.ReadFile(html)
			if err != nil {
				t.Fatal(err)
			}
			embedded, err := wasm.ExtractPerfetto(page)
			if err != nil {
				t.Fatal(err)
			}
			entries, err := os.ReadDir(out)
			if err != nil {
				t.Fatal(err)
			}
			if len(entries) == 0 || len(entries) != len(embedded) {
				t.Fatalf("%d files in %s, %d embedded in the page", len(entries), out, len(embedded))
			}
			mdText, _ := os.ReadFile(md)
			for _, e := range entries {
				data, err := os.ReadFile(filepath.Join(out, e.Name()))
				if err != nil {
					t.Fatal(err)
				}
				if !bytes.Equal(data, embedded[e.Name()]) {
					t.Errorf("%s differs from the file the page embeds", e.Name())
				}
				if !strings.HasPrefix(e.Name(), "finding-") || !strings.HasSuffix(e.Name(), ".json") || !json.Valid(data) {
					t.Errorf("%s: not a finding-N-<rule>.json of valid JSON", e.Name())
				}
				findings := 0
				if _, err := trace.Parse(bytes.NewReader(data), e.Name(), trace.LoadOptions{}, func(ev *trace.Event) error {
					if ev.Cat == "tracebook" && ev.Pid != "" {
						findings++
					}
					return nil
				}); err != nil {
					t.Errorf("%s: tracebook's importer rejects it: %v", e.Name(), err)
				}
				if findings == 0 {
					t.Errorf("%s has no finding track", e.Name())
				}
				if !bytes.Contains(mdText, []byte("`"+e.Name()+"`")) {
					t.Errorf("the Markdown report does not name %s", e.Name())
				}
			}
			if n := bytes.Count(mdText, []byte("Open in Perfetto: trace ")); n != len(entries) {
				t.Errorf("the Markdown report names %d windows for %d files", n, len(entries))
			}
		})
	}
}
