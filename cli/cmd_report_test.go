package cli

import (
	"bytes"
	"context"
	"encoding/base64"
	"io"
	"os"
	"path/filepath"
	"regexp"
	"strings"
	"testing"

	"github.com/tracebook/tracebook/analysis/report"
	"github.com/tracebook/tracebook/cells"
	"github.com/tracebook/tracebook/internal/testutil"
	"github.com/tracebook/tracebook/wasm"
)

// hostileTrace is a hand-made trace whose process, thread, operator, kernel
// and device names carry markup (analysis/report/testdata/hostile_names.json).
const hostileTrace = "../" + hostileTraceFromRoot

// hostileTraceFromRoot is hostileTrace from the repository's root, where
// the end-to-end goldens run.
const hostileTraceFromRoot = "analysis/report/testdata/hostile_names.json"

func runOK(t *testing.T, args ...string) string {
	t.Helper()
	var out, errb bytes.Buffer
	if rc := run(args, &out, &errb); rc != 0 {
		t.Fatalf("tracebook %s: exit %d\n%s%s", strings.Join(args, " "), rc, out.String(), errb.String())
	}
	return out.String()
}

// TestReportEscapesTraceNames: names with <script> and <img onerror> show as
// text in the Markdown and the HTML report, never as markup.
func TestReportEscapesTraceNames(t *testing.T) {
	dir := t.TempDir()
	md, html := filepath.Join(dir, "r.md"), filepath.Join(dir, "r.html")
	runOK(t, "report", hostileTrace, "--md", md, "-o", html)
	mdText, _ := os.ReadFile(md)
	page, _ := os.ReadFile(html)
	if raw := rawMarkdownHTML(string(mdText)); raw != "" {
		t.Errorf("Markdown report lets HTML through outside code: %q", raw)
	}
	for _, bad := range []string{"<script>alert", "<img src=x", "<img src"} {
		if bytes.Contains(page, []byte(bad)) {
			t.Errorf("HTML report contains raw %q", bad)
		}
	}
	if !bytes.Contains(page, []byte("&lt;script&gt;alert(1)&lt;/script&gt;")) {
		t.Error("HTML report does not show the <script> name as text")
	}
	if !bytes.Contains(mdText, []byte("alert(1)")) {
		t.Error("Markdown report lost the hostile name instead of escaping it")
	}
	// The charts keep the names as text too: inline SVG in the HTML, data:
	// URIs in the Markdown.
	svgs := regexp.MustCompile(`(?s)<svg .*?</svg>`).FindAll(page, -1)
	for _, m := range regexp.MustCompile(`data:image/svg\+xml;base64,([A-Za-z0-9+/=]+)`).FindAllSubmatch(mdText, -1) {
		svg, err := base64.StdEncoding.DecodeString(string(m[1]))
		if err != nil {
			t.Fatal(err)
		}
		svgs = append(svgs, svg)
	}
	shown := false
	for _, svg := range svgs {
		for _, bad := range []string{"<script", "<img", "<foreignObject"} {
			if bytes.Contains(svg, []byte(bad)) {
				t.Errorf("a chart contains raw %q", bad)
			}
		}
		shown = shown || bytes.Contains(svg, []byte("&lt;script&gt;alert(1)&lt;/script&gt;"))
	}
	if len(svgs) == 0 || !shown {
		t.Errorf("%d charts, none shows the <script> kernel name as text", len(svgs))
	}
	// Every <script> element of the page is one of the report's own.
	if n := bytes.Count(page, []byte("<script")); n > 6 {
		t.Errorf("HTML report has %d <script elements, want at most 6 (view, bundle, module, Perfetto files, Perfetto saver, loader)", n)
	}
}

// TestReportGolden compares the Markdown report of small real traces with
// golden files (testdata/report/<fixture>.md.golden). The report names each
// trace file as it was given, so the commands run from the repository's
// root, with the paths a user there would type. Under -update it also
// writes each fixture's encoded source
// (analysis/report/testdata/golden/<fixture>.source.msgpack), which the
// viewer parity tests (wasm/host) and analysis/report's tests read.
func TestReportGolden(t *testing.T) {
	tests := []struct {
		name  string
		paths []string
		args  []string
	}{
		{"alexnet_sync", []string{"testdata/hta/critical_path_alexnet/benchmark_result_2869224_1695835535_trace.json.gz"}, nil},
		{"dlrm_8rank_rank3", []string{"testdata/param/dlrm_8rank"}, []string{"--rank", "3"}},
		{"vllm_decode_graphs", []string{"testdata/tracelens/vllm_decode_full_mi300x/graph_execution.json.gz"}, nil},
		{"hostile_names", []string{hostileTraceFromRoot}, nil},
		{"resnet50_steps", []string{"testdata/kineto/resnet50_num_workers_0/worker0.1623143089861.pt.trace.json.gz"}, nil},
	}
	t.Chdir("..")
	for _, tc := range tests {
		t.Run(tc.name, func(t *testing.T) {
			md := filepath.Join(t.TempDir(), "r.md")
			args := append(append([]string{"report"}, tc.paths...), tc.args...)
			runOK(t, append(args, "--md", md)...)
			got, err := os.ReadFile(md)
			if err != nil {
				t.Fatal(err)
			}
			testutil.Golden(t, filepath.Join("cli", "testdata", "report", tc.name+".md.golden"), got)
			if *testutil.Update {
				// The encoded source, for the viewer parity test on real
				// traces (wasm/host): regenerated with the goldens.
				f, _, err := cells.ParseFilter(tc.args)
				if err != nil {
					t.Fatal(err)
				}
				src, _, err := collectReport(context.Background(), tc.paths, f, loadFlags{}, io.Discard)
				if err != nil {
					t.Fatal(err)
				}
				data, err := report.EncodeOffline(src)
				if err != nil {
					t.Fatal(err)
				}
				testutil.Golden(t, filepath.Join("analysis", "report", "testdata", "golden", tc.name+".source.msgpack"), data)
			}
		})
	}
}

// rawMarkdownHTML returns the first line where a '<' outside code blocks and
// code spans is not backslash-escaped (Markdown would pass it through as
// HTML), or "".
func rawMarkdownHTML(md string) string {
	inFence := ""
	for _, line := range strings.Split(md, "\n") {
		trim := strings.TrimSpace(line)
		if inFence != "" {
			if strings.HasPrefix(trim, inFence) && strings.Trim(trim, "`") == "" {
				inFence = ""
			}
			continue
		}
		if strings.HasPrefix(trim, "```") {
			inFence = trim[:len(trim)-len(strings.TrimLeft(trim, "`"))]
			continue
		}
		// Drop code spans: a run of n backticks up to the next run of n.
		var rest strings.Builder
		for i := 0; i < len(line); {
			if line[i] == '`' {
				j := i
				for j < len(line) && line[j] == '`' {
					j++
				}
				fence := line[i:j]
				if k := strings.Index(line[j:], fence); k >= 0 {
					i = j + k + len(fence)
					continue
				}
			}
			rest.WriteByte(line[i])
			i++
		}
		s := rest.String()
		for i := 0; i < len(s); i++ {
			if s[i] == '<' && (i == 0 || s[i-1] != '\\') {
				return line
			}
		}
	}
	return ""
}

type quietPublisher struct{}

func (quietPublisher) Stream(string, string)                                {}
func (quietPublisher) Display(map[string]any, map[string]any, string)       {}
func (quietPublisher) UpdateDisplay(map[string]any, map[string]any, string) {}
func (quietPublisher) ClearOutput(bool)                                     {}

// TestReportMagic runs %report in a notebook session: the Markdown comes
// back as text/markdown and text/plain, and --md / --html write the files.
func TestReportMagic(t *testing.T) {
	s, db, err := newSession(sessionConfig{cacheDir: "-", deterministic: true})
	if err != nil {
		t.Fatal(err)
	}
	defer db.Close()
	ctx := context.Background()
	if _, err := s.Execute(ctx, "%trace load "+hostileTrace, quietPublisher{}); err != nil {
		t.Fatal(err)
	}
	dir := t.TempDir()
	md, html := filepath.Join(dir, "r.md"), filepath.Join(dir, "r.html")
	res, err := s.Execute(ctx, "%report --md "+md+" --html "+html, quietPublisher{})
	if err != nil {
		t.Fatal(err)
	}
	mdOut, _ := res.Data["text/markdown"].(string)
	if !strings.Contains(mdOut, "## Executive Summary") || !strings.Contains(mdOut, "Top issues") {
		t.Errorf("%%report text/markdown lacks the report sections:\n%.400s", mdOut)
	}
	if _, ok := res.Data["text/plain"].(string); !ok {
		t.Error("%report has no text/plain output")
	}
	if raw := rawMarkdownHTML(mdOut); raw != "" {
		t.Errorf("%%report Markdown lets HTML through: %q", raw)
	}
	for _, p := range []string{md, html} {
		if fi, err := os.Stat(p); err != nil || fi.Size() == 0 {
			t.Errorf("%%report did not write %s: %v", p, err)
		}
	}
	if s.Bundle() == nil {
		t.Error("%report did not keep its bundle in the session")
	}
}

// TestReportCheckStatic: --check of a report without a module fails and says why.
func TestReportCheckStatic(t *testing.T) {
	if wasm.Module() != nil {
		t.Skip("built with the viewer module: host.TestCheck covers --check")
	}
	html := filepath.Join(t.TempDir(), "r.html")
	runOK(t, "report", hostileTrace, "-o", html)
	var out, errb bytes.Buffer
	if rc := run([]string{"report", "--check", html}, &out, &errb); rc == 0 {
		t.Fatalf("report --check of a static report exited 0: %s", out.String())
	}
	if !strings.Contains(errb.String(), "without the viewer module") {
		t.Errorf("report --check: %q, want it to say the module is missing", errb.String())
	}
}
