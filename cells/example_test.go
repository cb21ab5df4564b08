package cells_test

import (
	"context"
	"fmt"

	"github.com/tracebook/tracebook/analysis/table"
	"github.com/tracebook/tracebook/cells"
)

func ExampleParse() {
	c, err := cells.Parse("%evidence sync --rank 0 --window '120..180.5'  # decode steps")
	if err != nil {
		panic(err)
	}
	fmt.Println(c.Kind, c.Name, c.Args)
	c, _ = cells.Parse("%%sql --max-rows 5\nSELECT 1")
	fmt.Printf("%v %s %q line %d\n", c.Kind, c.Name, c.Body, c.BodyLine)
	// Output:
	// line magic evidence [sync --rank 0 --window 120..180.5]
	// cell magic sql "SELECT 1" line 2
}

func ExampleParseFilter() {
	f, rest, err := cells.ParseFilter([]string{"sync", "--rank", "3", "--phase", "decode", "--window=1.5..2"})
	if err != nil {
		panic(err)
	}
	fmt.Println(rest, f.Rank, f.HasRank, f.Phase, f.WindowStartNs, f.WindowEndNs)
	_, _, err = cells.ParseFilter([]string{"--phase", "warmup"})
	fmt.Println(err)
	// Output:
	// [sync] 3 true decode 1500000 2000000
	// --phase: "warmup" is not prefill, decode, mixed or step:N
}

func ExampleTableBundle() {
	t := &table.Table{
		Columns: []table.Column{{Name: "kernel", Type: "VARCHAR"}, {Name: "total_ms", Type: "DOUBLE"}},
		Rows:    [][]any{{"<script>", 12.5}, {"gemm", 3.25}},
		Total:   120,
	}
	b := cells.TableBundle(t)
	fmt.Print(b[cells.MIMEText])
	// Output:
	// kernel   | total_ms
	// ---------+---------
	// <script> |     12.5
	// gemm     |     3.25
	// showing 2 of 120 rows
}

func ExampleSession_Execute() {
	s := cells.NewSession(nil, cells.SessionOptions{})
	res, err := s.Execute(context.Background(), "%context tp=4 max_num_seqs=256", nil)
	if err != nil {
		panic(err)
	}
	fmt.Print(res.Data[cells.MIMEText])
	_, err = s.Execute(context.Background(), "%evidence sync", nil)
	fmt.Println(err)
	// Output:
	// key          | value | meaning
	// -------------+-------+---------------------
	// tp           | 4     | tensor-parallel size
	// max-num-seqs | 256   | vLLM --max-num-seqs
	// 2 rows
	// NotAvailable: %evidence is not available in this build
}

func ExampleSession_Complete() {
	s := cells.NewSession(nil, cells.SessionOptions{})
	code := "%evidence sync --ph"
	matches, start, end := s.Complete(code, len([]rune(code)))
	fmt.Println(matches, start, end)
	// Output:
	// [--phase] 15 19
}
