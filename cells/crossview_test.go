package cells

import (
	"context"
	"strings"
	"testing"

	"github.com/tracebook/tracebook/analysis/crossview"
	"github.com/tracebook/tracebook/analysis/table"
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
	if len(eng.args) != 1 || eng.args[0][0] != "job" || eng.args[0][1] != 0 {
		t.Errorf("query args = %v, want the trace and the rank as parameters", eng.args)
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
