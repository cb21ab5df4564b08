//go:build cgo

package pipeline

import (
	"context"
	"path/filepath"
	"reflect"
	"slices"
	"testing"

	"github.com/tracebook/tracebook/analysis/crossview"
	"github.com/tracebook/tracebook/analysis/trace"
	"github.com/tracebook/tracebook/internal/duck"
	"github.com/tracebook/tracebook/internal/testutil"
	"github.com/tracebook/tracebook/sql"
)

// tableOnly hides an engine's QueryEach: the cross-view reads a table.
type tableOnly struct{ Engine }

// The cross-view input streamed from DuckDB row by row is the input read
// from the whole table: on a trace with python frames, and on a 2021-format
// one whose operators carry Call stacks; from an in-memory database and from
// one in a file (which hands the rows over in pages of a stored result).
func TestCrossViewStreamedInput(t *testing.T) {
	p, _ := sql.Lookup("crossview")
	for _, dir := range []string{"tracelens/vllm_prefilldecode_piecewise_mi300x", "kineto/resnet50_num_workers_0"} {
		for _, path := range []string{"", filepath.Join(t.TempDir(), "t.duckdb")} {
			db, err := duck.Open(path, duck.Options{CacheDir: "-", Threads: 2})
			if err != nil {
				t.Fatal(err)
			}
			defer db.Close()
			ctx := context.Background()
			if _, err := db.Load(ctx, []string{filepath.Join(testutil.Testdata(t), dir)}, trace.LoadOptions{Name: "t"}, nil); err != nil {
				t.Fatal(err)
			}
			if _, ok := Engine(db).(RowStreamer); !ok {
				t.Fatal("duck.DB does not stream rows")
			}
			streamed, err := crossviewInput(ctx, db, p.SQL, "", -1)
			if err != nil {
				t.Fatal(err)
			}
			whole, err := crossviewInput(ctx, tableOnly{db}, p.SQL, "", -1)
			if err != nil {
				t.Fatal(err)
			}
			// The room made before reading counts exactly the frames the
			// preset returns (its host-event predicate, repeated in the count);
			// the allocator rounds it up to its size class.
			if n, c := len(streamed.Frames), cap(streamed.Frames); c < n || c > n+n/20+64 {
				t.Errorf("%s: room for %d frames, %d read", dir, cap(streamed.Frames), len(streamed.Frames))
			}
			if len(streamed.Frames) == 0 || len(streamed.Ops) == 0 {
				t.Fatalf("%s: %d frames, %d ops streamed", dir, len(streamed.Frames), len(streamed.Ops))
			}
			a, b := resolved(streamed), resolved(whole)
			if !reflect.DeepEqual(a, b) {
				t.Errorf("%s (%q): the streamed input differs from the table's (%d/%d frames, %d/%d ops)",
					dir, path, len(streamed.Frames), len(whole.Frames), len(streamed.Ops), len(whole.Ops))
			}
		}
	}
}

// resolvedFrame is a Frame with its thread and Call stack spelled out: the
// indexes into Input.Threads and Input.Stacks depend on the rows' order.
type resolvedFrame struct {
	crossview.Frame
	Thread    crossview.Thread
	CallStack string
}

// resolved returns an input's frames, resolved, and operations, both in ID
// order, and its origins.
func resolved(in *crossview.Input) []any {
	var frames []resolvedFrame
	for i := range in.Frames {
		f := in.Frames[i]
		r := resolvedFrame{Thread: *in.ThreadOf(&f), CallStack: in.CallStackOf(&f)}
		f.Thread, f.CallStack = 0, 0
		r.Frame = f
		frames = append(frames, r)
	}
	slices.SortFunc(frames, func(a, b resolvedFrame) int { return int(a.ID - b.ID) })
	ops := slices.Clone(in.Ops)
	slices.SortFunc(ops, func(a, b crossview.Op) int { return int(a.ID - b.ID) })
	return []any{frames, ops, in.Origins, in.Steps}
}
