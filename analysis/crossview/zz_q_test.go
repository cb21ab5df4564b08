//go:build cgo

package crossview_test

import (
	"context"
	"fmt"
	"testing"
)

func TestZZQuery(t *testing.T) {
	db := load(t, "tracemap/vllm_h100_tp4_rank0")
	for _, q := range []string{
		`SELECT kind, name, pid, tid, (ts_ns - (SELECT min(first_ts_ns) FROM traces))/1e6 AS ts_ms, dur_ns/1e6 AS dur_ms, (end_ns - (SELECT min(first_ts_ns) FROM traces))/1e6 AS end_ms FROM events WHERE ph='X' ORDER BY end_ns DESC LIMIT 8`,
		`SELECT kind, name, tid, (ts_ns - (SELECT min(first_ts_ns) FROM traces))/1e6 AS ts_ms, dur_ns/1e6 FROM events WHERE ph='X' AND tid = '1006643648' ORDER BY ts_ns LIMIT 30`,
		`SELECT min(first_ts_ns), max(last_end_ns) FROM traces`,
	} {
		tb, err := db.Query(context.Background(), q, 0)
		if err != nil {
			t.Fatal(err)
		}
		for _, r := range tb.Rows {
			fmt.Println(r...)
		}
		fmt.Println("--")
	}
}
