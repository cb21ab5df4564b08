package report_test

import (
	"bytes"
	"fmt"
	"strings"

	"github.com/tracebook/tracebook/analysis/evidence"
	"github.com/tracebook/tracebook/analysis/report"
	"github.com/tracebook/tracebook/analysis/table"
)

func ExampleGenerate() {
	b := evidence.NewBundle()
	b.Traces = &table.Table{Name: "traces",
		Columns: []table.Column{{Name: "trace"}, {Name: "path"}, {Name: "rank"}, {Name: "producer"}, {Name: "events"}},
		Rows:    [][]any{{"job", "runs/<rank0>.json.gz", int64(0), "profiler_step", int64(1234)}}}
	var md bytes.Buffer
	if err := report.Generate(&md, b, report.Markdown); err != nil {
		fmt.Println(err)
	}
	for _, line := range strings.Split(md.String(), "\n") {
		if strings.HasPrefix(line, "# ") || strings.HasPrefix(line, "- Trace file") || strings.HasPrefix(line, "- Event count") {
			fmt.Println(line)
		}
	}
	// Output:
	// # TorchProfiler Trace Report
	// - Trace file: `runs/<rank0>.json.gz`
	// - Event count: 1,234
}
