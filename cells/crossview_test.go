package cells

import (
	"context"
	"strings"
	"testing"

	"github.com/tracebook/tracebook/analysis/crossview"
	"github.com/tracebook/tracebook/analysis/table"
	"github.com/tracebook/tracebook/sql"
)

// crossviewRows is a crossview preset result: a python frame enclosing a
// launch whose kernel name would be markup in HTML.
func crossviewRows() *table.Table {
	t := &table.Table{}
	for _, c := range crossview.Columns {
		t.Columns = append(t.Columns, table.Column{Name: c})
	}
	row := func(kind, trace string, id, parent int64, thread, evKind, api, name string, ts, dur int64) []any {
		var class any
		if kind == "op" {
			class = crossview.ClassComp
		}
		return []any{kind, trace, int64(0), id, parent, thread, evKind, api, name, ts, dur, nil, nil, class, nil}
	}
	t.Rows = [][]any{
		row("frame", "job", 1, 0, "1/1", "python", "", "train.py(1): step", 0, 1000),
		row("frame", "job", 2, 0, "1/1", "runtime", "launch", "cudaLaunchKernel", 10, 5),
		row("op", "job", 3, 2, "", "kernel", "", "k<script>", 20, 500),
		row("origin", "job", 0, 0, "", "", "", "", 0, 0),
	}
	t.Total = int64(len(t.Rows))
	return t
}

func TestCrossView(t *testing.T) {
	eng := &fakeEngine{result: crossviewRows()}
	s := NewSession(eng, SessionOptions{})
	res, err := CrossViewHook(crossview.DefaultOptions())(context.Background(), s, []string{"--trace", "job", "--rank", "0"}, nil)
	if err != nil {
		t.Fatal(err)
	}
	// The crossview preset's query takes the trace and the rank; the
	// capture area's evidence, which the cross-check judges its slice by,
	// runs beside it.
	p, _ := sql.Lookup("crossview")
	var cv, capture [][]any
	for i, q := range eng.queries {
		switch {
		case q == p.SQL:
			cv = append(cv, eng.args[i])
		case strings.Contains(q, "evidence_capture"):
			capture = append(capture, eng.args[i])
		}
	}
	if len(cv) != 1 || len(cv[0]) != 2 || cv[0][0] != "job" || cv[0][1] != 0 {
		t.Errorf("crossview query args = %v, want the trace and the rank as parameters", cv)
	}
	if len(capture) == 0 {
		t.Errorf("no capture preset ran beside the cross-view (queries %q)", eng.queries)
	}
	text, _ := res.Data["text/plain"].(string)
	html, _ := res.Data["text/html"].(string)
	if !strings.Contains(text, "train.py(1): step ▸ cudaLaunchKernel  → k<script>  100.0% (") {
		t.Errorf("text/plain lacks the GPU tree:\n%s", text)
	}
	if strings.Contains(html, "<script") || !strings.Contains(html, "k&lt;script&gt;") {
		t.Errorf("text/html does not escape the kernel name:\n%s", html)
	}
	if _, err := CrossViewHook(crossview.DefaultOptions())(context.Background(), s, []string{"extra"}, nil); err == nil {
		t.Error("an unexpected argument was accepted")
	}
}
