package table

import (
	"strings"
	"testing"
)

func syncTable(traces ...string) *Table {
	t := &Table{
		Name: "sync",
		Columns: []Column{
			{Name: "trace", Type: "VARCHAR", Unit: "TEXT"},
			{Name: "rank", Type: "BIGINT", Unit: "INT"},
			{Name: "call", Type: "VARCHAR", Unit: "TEXT"},
			{Name: "blocked_ns", Type: "BIGINT", Unit: "DURATION_NS", Doc: "Sum of call durations."},
			{Name: "count", Type: "BIGINT", Unit: "COUNT"},
			{Name: "hist", Type: "VARCHAR", Unit: "HIST"},
		},
		Total: 10,
	}
	for i, tr := range traces {
		t.Rows = append(t.Rows, []any{tr, int64(i), "cudaStreamSynchronize", int64(4_820_000), int64(1200), "1:2"})
	}
	return t
}

// TestTraceColumn: the trace column shows only when more than one trace is
// in scope; histograms never show.
func TestTraceColumn(t *testing.T) {
	tests := []struct {
		name     string
		traces   []string
		oneTrace bool
		want     string
	}{
		{"one trace", []string{"a", "a"}, true, "rank,call,blocked_ns,count"},
		{"two traces", []string{"a", "b"}, false, "trace,rank,call,blocked_ns,count"},
	}
	for _, tc := range tests {
		t.Run(tc.name, func(t *testing.T) {
			tb := syncTable(tc.traces...)
			if got := OneTrace(tb); got != tc.oneTrace {
				t.Fatalf("OneTrace = %v, want %v", got, tc.oneTrace)
			}
			s := Present(tb, Options{OneTrace: OneTrace(tb)})
			var names []string
			for _, c := range s.Columns {
				names = append(names, c.Name)
			}
			if got := strings.Join(names, ","); got != tc.want {
				t.Errorf("columns %s, want %s", got, tc.want)
			}
			for _, r := range s.Rows {
				if len(r) != len(s.Columns) {
					t.Errorf("row of %d cells for %d columns", len(r), len(s.Columns))
				}
			}
		})
	}
}

func TestWriteMarkdown(t *testing.T) {
	tb := syncTable("a")
	tb.Rows = append(tb.Rows,
		[]any{"a", int64(1), "<script>alert(1)</script>|x", nil, int64(3), ""},
		[]any{"a", int64(2), strings.Repeat("k", 50) + "日本" + strings.Repeat("z", 100), int64(1), int64(1), ""})
	var b strings.Builder
	if err := WriteMarkdown(&b, Present(tb, Options{OneTrace: true})); err != nil {
		t.Fatal(err)
	}
	want := "| rank | call | blocked (ms) | count |\n" +
		"|---:|---|---:|---:|\n" +
		"| 0 | `cudaStreamSynchronize` | 4.820 | 1,200 |\n" +
		"| 1 | `<script>alert(1)</script>\\|x` |  | 3 |\n" +
		"| 2 | `" + strings.Repeat("k", 50) + "日本" + strings.Repeat("z", 20) + "…" + strings.Repeat("z", 23) + "` | 0.000 | 1 |\n"
	if b.String() != want {
		t.Errorf("WriteMarkdown:\n%s\nwant:\n%s", b.String(), want)
	}
}

// TestPresentKeepsFullText: a shortened cell keeps the whole text, the
// unit-less cells and the doc are what the reader's tooltip shows.
func TestPresentKeepsFullText(t *testing.T) {
	name := strings.Repeat("x", 200)
	tb := &Table{Columns: []Column{{Name: "name", Type: "VARCHAR"}, {Name: "total_ns", Type: "BIGINT", Unit: "DURATION_NS", Doc: "Sum."}},
		Rows: [][]any{{name, int64(1_500_000)}}}
	s := Present(tb, Options{MaxText: 20})
	c := s.Rows[0][0]
	if c.Full != name || len([]rune(c.Text)) != 20 || c.Kind != Text {
		t.Errorf("long name: %+v", c)
	}
	if n := s.Rows[0][1]; n.Text != "1.500" || n.Full != "" || n.Kind != Numeric {
		t.Errorf("duration cell: %+v", n)
	}
	if col := s.Columns[1]; col.Header != "total (ms)" || col.Doc != "total_ns, DURATION_NS: Sum." || !col.Right {
		t.Errorf("duration column: %+v", col)
	}
	if s.Columns[0].Right {
		t.Error("text column is right-aligned")
	}
}

func TestMarkdownText(t *testing.T) {
	tests := []struct{ in, want string }{
		{"<script>", `\<script\>`},
		{"a_b*c", `a_b\*c`},
		{"_a_ b__c __d", `\_a\_ b\_\_c \_\_d`},
		{"# head", `\# head`},
		{"1. item", `1\. item`},
		{"line\nbreak", "line break"},
	}
	for _, tc := range tests {
		if got := MarkdownText(tc.in); got != tc.want {
			t.Errorf("MarkdownText(%q) = %q, want %q", tc.in, got, tc.want)
		}
	}
	if got := MarkdownCode("a`b|c"); got != "``a`b\\|c``" {
		t.Errorf("MarkdownCode = %q", got)
	}
}

// TestPresentShortensApart: two kernels whose long names differ only in
// the middle keep that difference in their shortened cells.
func TestPresentShortensApart(t *testing.T) {
	fill := func(ty string) string {
		return "void at::native::vectorized_elementwise_kernel<4, at::native::FillFunctor<" + ty + ">, std::array<char*, 1ul> >(int, at::native::FillFunctor<" + ty + ">, std::array<char*, 1ul>)"
	}
	tb := &Table{Columns: []Column{{Name: "name", Type: "VARCHAR"}, {Name: "count", Type: "BIGINT", Unit: "COUNT"}},
		Rows: [][]any{{fill("int"), int64(4)}, {fill("long"), int64(2)}, {"short", int64(1)}}}
	s := Present(tb, Options{})
	a, b := s.Rows[0][0], s.Rows[1][0]
	if a.Text == b.Text || !strings.Contains(a.Text, "FillFunctor<int>") || !strings.Contains(b.Text, "FillFunctor<long>") {
		t.Errorf("look-alike cells %q and %q", a.Text, b.Text)
	}
	if a.Full != fill("int") || b.Full != fill("long") || len([]rune(a.Text)) > MaxText || len([]rune(b.Text)) > MaxText {
		t.Errorf("cells %+v %+v", a, b)
	}
	if c := s.Rows[2][0]; c.Text != "short" || c.Full != "" {
		t.Errorf("short cell %+v", c)
	}
}
