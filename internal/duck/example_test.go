//go:build cgo

package duck_test

import (
	"context"
	"fmt"

	"github.com/tracebook/tracebook/analysis/trace"
	"github.com/tracebook/tracebook/internal/duck"
)

func Example() {
	db, err := duck.Open("", duck.Options{CacheDir: "-"}) // in memory, no parse cache
	if err != nil {
		panic(err)
	}
	defer db.Close()
	ctx := context.Background()
	res, err := db.Load(ctx, []string{"testdata/tiny.json"}, trace.LoadOptions{}, nil)
	if err != nil {
		panic(err)
	}
	fmt.Println(res.Trace, res.Ranks, res.Events)
	t, err := db.Query(ctx, `SELECT name, dur_ns FROM kernels WHERE trace = ?`, 10, res.Trace)
	if err != nil {
		panic(err)
	}
	fmt.Println(t.Rows)
	// Output:
	// tiny [3] 12
	// [[sgemm_128x64 20500]]
}
