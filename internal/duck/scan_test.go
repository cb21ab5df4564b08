//go:build cgo

package duck

import (
	"os"
	"path/filepath"
	"strings"
	"testing"

	duckdb "github.com/duckdb/duckdb-go/v2"

	"github.com/tracebook/tracebook/analysis/trace"
)

// The load writes its rows straight into DuckDB's vectors (fillVectors)
// only while the driver's chunk shows DuckDB's: a driver upgrade that
// hides it fails here, not as a silently slower load.
func TestChunkOf(t *testing.T) {
	if c, _ := chunkOf(&duckdb.DataChunk{}); c == nil {
		t.Fatal("the driver's DataChunk no longer holds DuckDB's chunk where chunkOf looks: the load writes a value at a time")
	}
}

// Written straight into the vectors or a value at a time through the
// driver, the events are the same: texts kept in the vector (up to 12
// bytes of valid UTF-8) and those DuckDB stores, every kind and api, the
// typed args present and absent.
func TestFillVectorsSameEvents(t *testing.T) {
	edge := filepath.Join(t.TempDir(), "edge.json")
	events := []string{
		`{"ph":"X","cat":"kernel","name":"k","pid":0,"tid":7,"ts":1,"dur":2,"args":{"correlation":5,"stream":7,"device":0,"grid":[1,1,1],"block":[32,1,1]}}`,
		`{"ph":"X","cat":"cuda_runtime","name":"cudaLaunchKernel","pid":1,"tid":1,"ts":0,"dur":1,"args":{"correlation":5}}`,
		`{"ph":"X","cat":"cpu_op","name":"aten::mm","pid":1,"tid":1,"ts":0,"dur":3,"args":{"a":1}}`,
		`{"ph":"X","cat":"cpu_op","name":"twelve bytes","pid":1,"tid":1,"ts":0,"dur":3,"args":{"abcdef":"1"}}`,
		`{"ph":"X","cat":"cpu_op","name":"n","pid":1,"tid":1,"ts":0,"dur":3,"args":{"abcdefg":"12"}}`,
		`{"ph":"X","cat":"cpu_op","name":"n","pid":1,"tid":1,"ts":0,"dur":3,"args":{"é":"ü"}}`,
		`{"ph":"X","cat":"cpu_op","name":"n","pid":1,"tid":1,"ts":0,"dur":3,"args":{"Input Dims":[[2,3],[3,4]],"Input type":["float","float"]}}`,
		`{"ph":"i","cat":"cpu_instant_event","name":"i","pid":1,"tid":1,"ts":4,"s":"t"}`,
		`{"ph":"a phase longer than twelve","cat":"x","name":"odd","pid":1,"tid":1,"ts":4}`,
		`{"ph":"ü","cat":"x","name":"odd","pid":1,"tid":1,"ts":4}`,
		`{"ph":"C","cat":"x","name":"counter","pid":1,"tid":1,"ts":5,"args":{"v":3}}`,
		`{"ph":"s","cat":"ac2g","name":"ac2g","id":5,"pid":1,"tid":1,"ts":0}`,
	}
	if err := os.WriteFile(edge, []byte(`{"traceEvents":[`+strings.Join(events, ",\n")+`]}`), 0o644); err != nil {
		t.Fatal(err)
	}
	defer func(d bool) { fillDirect = d }(fillDirect)
	for _, path := range []string{edge, tiny, "../../testdata/hta/amd_mi250_minitoy/mi250_minitoy_train_ROCm6_2_kineto.json.gz", "../../testdata/kineto/resnet50_num_workers_0/worker0.1623143089861.pt.trace.json.gz"} {
		if _, err := os.Stat(path); err != nil {
			t.Fatal(err)
		}
		db := openTest(t, "-")
		var digests [2]string
		for i, direct := range []bool{true, false} {
			fillDirect = direct
			name := []string{"direct", "values"}[i]
			load(t, db, trace.LoadOptions{Name: name}, path)
			digests[i] = strings.ReplaceAll(csv(query(t, db, strings.Replace(eventsDigest, "FROM events", "FROM events WHERE trace = '"+name+"'", 1))), name+",", "T,")
		}
		if digests[0] != digests[1] {
			t.Errorf("%s: events written into the vectors differ from those written a value at a time:\n%s\n%s", path, digests[0], digests[1])
		}
	}
}
