package cells

import (
	"encoding/json"
	"math"
	"path/filepath"
	"regexp"
	"strings"
	"testing"

	"github.com/tracebook/tracebook/analysis/table"
	"github.com/tracebook/tracebook/internal/testutil"
)

// hostileTable holds every value kind, markup and control characters in
// names and values, non-ASCII text and a capped row count.
func hostileTable() *table.Table {
	return &table.Table{
		Name: "top <kernels>",
		Columns: []table.Column{
			{Name: "name<script>alert(1)</script>", Type: "VARCHAR"},
			{Name: "calls", Type: "BIGINT", Unit: "count"},
			{Name: "total_ms", Type: "DOUBLE", Unit: "ms", Doc: `"quoted" & <b>bold</b>`},
			{Name: "sync", Type: "BOOLEAN"},
		},
		Rows: [][]any{
			{`<img src=x onerror="alert(1)">`, int64(1200), 35.25, true},
			{"void at::native::vectorized_elementwise_kernel<4, at::native::CUDAFunctor_add<float>, at::detail::Array<char*, 3> >(int, ...)", int64(7), 1.0 / 3, false},
			{"line\nbreak\ttab\x01", int64(-3), math.NaN(), nil},
			{"日本語 été", int64(9007199254740993), 1e-9, false},
			{nil, nil, math.Inf(1), nil},
		},
		Total: 1234,
	}
}

func TestTableBundleGolden(t *testing.T) {
	tests := []struct {
		name string
		t    *table.Table
	}{
		{"hostile", hostileTable()},
		{"empty", &table.Table{Columns: []table.Column{{Name: "a", Type: "INTEGER"}}}},
		{"one", &table.Table{Columns: []table.Column{{Name: "n", Type: "BIGINT"}, {Name: "s", Type: "VARCHAR"}}, Rows: [][]any{{int64(42), "x"}}, Total: 1}},
	}
	for _, tc := range tests {
		t.Run(tc.name, func(t *testing.T) {
			b := TableBundle(tc.t)
			testutil.Golden(t, filepath.Join("testdata", "table."+tc.name+".text.golden"), []byte(b[MIMEText].(string)))
			testutil.Golden(t, filepath.Join("testdata", "table."+tc.name+".html.golden"), []byte(b[MIMEHTML].(string)))
			testutil.Golden(t, filepath.Join("testdata", "table."+tc.name+".json.golden"), append([]byte(b[MIMEJSON].(json.RawMessage)), '\n'))
		})
	}
}

func TestTableHTMLEscapes(t *testing.T) {
	h := TableBundle(hostileTable())[MIMEHTML].(string)
	for _, bad := range []string{"<script", "<img", "<b>", "onerror=\"", `"quoted"`} {
		if strings.Contains(h, bad) {
			t.Errorf("text/html holds %q unescaped:\n%s", bad, h)
		}
	}
	for _, re := range []string{
		`<th title="VARCHAR">name&lt;script&gt;alert\(1\)&lt;/script&gt;</th>`,
		`<td>&lt;img src=x onerror=&#34;alert\(1\)&#34;&gt;</td>`,
		`<caption>top &lt;kernels&gt;</caption>`,
		`<p>showing 5 of 1234 rows</p>`,
	} {
		if !regexp.MustCompile(re).MatchString(h) {
			t.Errorf("text/html does not match %s:\n%s", re, h)
		}
	}
	// Only the tags the template writes appear.
	for _, tag := range regexp.MustCompile(`<([a-z]+)`).FindAllStringSubmatch(h, -1) {
		switch tag[1] {
		case "table", "caption", "thead", "tbody", "tr", "th", "td", "i", "p":
		default:
			t.Errorf("text/html holds a <%s> tag", tag[1])
		}
	}
}

func TestTableJSONKeepsInt64(t *testing.T) {
	raw := TableBundle(hostileTable())[MIMEJSON].(json.RawMessage)
	if !strings.Contains(string(raw), "9007199254740993") {
		t.Errorf("application/json lost int64 precision: %s", raw)
	}
	var v struct {
		Columns []table.Column `json:"columns"`
		Rows    [][]any        `json:"rows"`
		Total   int64          `json:"total"`
	}
	if err := json.Unmarshal(raw, &v); err != nil {
		t.Fatalf("application/json does not decode: %v", err)
	}
	if v.Total != 1234 || len(v.Rows) != 5 || len(v.Columns) != 4 {
		t.Errorf("application/json = total %d, %d rows, %d columns; want 1234, 5, 4", v.Total, len(v.Rows), len(v.Columns))
	}
}

func TestTableBundleDeterministic(t *testing.T) {
	a, b := TableBundle(hostileTable()), TableBundle(hostileTable())
	for _, k := range []string{MIMEText, MIMEHTML} {
		if a[k] != b[k] {
			t.Errorf("%s differs between two renderings", k)
		}
	}
	if string(a[MIMEJSON].(json.RawMessage)) != string(b[MIMEJSON].(json.RawMessage)) {
		t.Error("application/json differs between two renderings")
	}
}
