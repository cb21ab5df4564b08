package cells

import (
	"context"
	"fmt"
	"sync"
	"time"

	"github.com/tracebook/tracebook/analysis/table"
	"github.com/tracebook/tracebook/analysis/trace"
)

// fakeEngine is an Engine for the tests that need no database: it answers
// with canned tables and errors and records what it was asked.
type fakeEngine struct {
	mu       sync.Mutex
	tables   map[string][]table.Column
	traces   []string
	queryErr error
	result   *table.Table
	queries  []string
	args     [][]any
	// load is called by Load; nil loads nothing.
	load func(ctx context.Context, paths []string, opts trace.LoadOptions, progress func(trace.Progress)) (*trace.LoadResult, error)
	// columnsCalls counts Columns calls.
	columnsCalls int
}

func (f *fakeEngine) Query(ctx context.Context, sql string, maxRows int, args ...any) (*table.Table, error) {
	f.mu.Lock()
	defer f.mu.Unlock()
	f.queries = append(f.queries, sql)
	f.args = append(f.args, args)
	if sql == traceCatalogQuery {
		// Each trace of ranks 0 and 1.
		t := &table.Table{Columns: []table.Column{{Name: "trace", Type: "VARCHAR"}, {Name: "rank", Type: "INTEGER"}}}
		for _, n := range f.traces {
			t.Rows = append(t.Rows, []any{n, int64(0)}, []any{n, int64(1)})
		}
		return t, nil
	}
	if f.queryErr != nil {
		return nil, f.queryErr
	}
	if f.result != nil {
		return f.result, nil
	}
	return &table.Table{Columns: []table.Column{{Name: "x", Type: "INTEGER"}}, Rows: [][]any{{int64(1)}}, Total: 1}, nil
}

func (f *fakeEngine) Load(ctx context.Context, paths []string, opts trace.LoadOptions, progress func(trace.Progress)) (*trace.LoadResult, error) {
	if f.load == nil {
		return nil, fmt.Errorf("fake engine loads nothing")
	}
	return f.load(ctx, paths, opts, progress)
}

func (f *fakeEngine) Drop(ctx context.Context, name string) error { return nil }

func (f *fakeEngine) Columns(ctx context.Context) (map[string][]table.Column, error) {
	f.mu.Lock()
	defer f.mu.Unlock()
	f.columnsCalls++
	return f.tables, nil
}

// fakeClock advances by step on every call.
type fakeClock struct {
	mu   sync.Mutex
	now  time.Time
	step time.Duration
}

func (c *fakeClock) Now() time.Time {
	c.mu.Lock()
	defer c.mu.Unlock()
	c.now = c.now.Add(c.step)
	return c.now
}

// recorder is a Publisher that records what it was sent.
type recorder struct {
	mu     sync.Mutex
	events []published
}

type published struct {
	kind, id, text string
}

func (r *recorder) Stream(name, text string) {
	r.mu.Lock()
	defer r.mu.Unlock()
	r.events = append(r.events, published{"stream", name, text})
}

func (r *recorder) Display(data, metadata map[string]any, id string) {
	r.mu.Lock()
	defer r.mu.Unlock()
	r.events = append(r.events, published{"display", id, fmt.Sprint(data[MIMEText])})
}

func (r *recorder) UpdateDisplay(data, metadata map[string]any, id string) {
	r.mu.Lock()
	defer r.mu.Unlock()
	r.events = append(r.events, published{"update", id, fmt.Sprint(data[MIMEText])})
}

func (r *recorder) ClearOutput(wait bool) {
	r.mu.Lock()
	defer r.mu.Unlock()
	r.events = append(r.events, published{"clear", "", fmt.Sprint(wait)})
}

// testCatalog is a small catalog for completion and inspection.
func testCatalog() map[string][]table.Column {
	return map[string][]table.Column{
		"events":  {{Name: "trace", Type: "VARCHAR"}, {Name: "name", Type: "VARCHAR"}, {Name: "dur_ns", Type: "BIGINT", Unit: "ns", Doc: "duration"}, {Name: "kind", Type: "VARCHAR"}},
		"traces":  {{Name: "trace", Type: "VARCHAR"}, {Name: "rank", Type: "INTEGER"}, {Name: "events", Type: "BIGINT"}},
		"données": {{Name: "été", Type: "DOUBLE"}},
	}
}
