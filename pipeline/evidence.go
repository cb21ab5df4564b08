package pipeline

import (
	"context"
	"fmt"
	"regexp"
	"runtime"
	"slices"
	"strconv"
	"strings"
	"sync"

	"github.com/tracebook/tracebook/analysis/crossview"
	"github.com/tracebook/tracebook/analysis/evidence"
	"github.com/tracebook/tracebook/analysis/findings"
	"github.com/tracebook/tracebook/analysis/table"
	"github.com/tracebook/tracebook/internal/suggest"
	"github.com/tracebook/tracebook/sql"
)

// CollectEvidence runs the presets of areas ("all" = every area, "phases" =
// steps) under f and returns the bundle: the traces' metadata, each area's
// mergeable rows with the units of its preset header (ranks always
// comes along: the findings read the GPU span from it), the evidence gaps,
// the findings for f and the %context values. Each area's rows are also kept
// in the database as the table evidence_<area>, so a SQL cell can re-query
// them. The trace, rank and window of f reach SQL as parameters; step,
// phase and stream are applied by the rollup (analysis/evidence).
//
// Limits, where given, are DuckDB memory limits to run the SQL under
// (MemoryLimiter: a database file): everything under the first, and what
// runs out of memory under it again under the next, the presets that
// finished kept.
func CollectEvidence(ctx context.Context, eng Engine, areas []string, f evidence.Filter, context map[string]string, limits ...string) (*evidence.Bundle, error) {
	return collectEvidence(ctx, eng, areas, f, context, make(chan struct{}, presetWorkers), nil, limits...)
}

// collectEvidence is CollectEvidence with the presets each holding one of
// slots while they run (a semaphore: a channel of its capacity), which
// CollectReport shares with the cross-view. The capture preset's interval
// rows (the intervals the capture gate leaves out, sql/capture.sql) are
// kept out of the capture area's table and handed to leftOut, when given,
// as soon as the preset is done: CollectReport's cross-views leave out the
// same.
func collectEvidence(ctx context.Context, eng Engine, areas []string, f evidence.Filter, context map[string]string, slots chan struct{}, leftOut func([]crossview.LeftOut), limits ...string) (*evidence.Bundle, error) {
	if eng == nil {
		return nil, fmt.Errorf("evidence: no database")
	}
	names, err := resolveAreas(areas)
	if err != nil {
		return nil, err
	}
	// The rules take every share of the ranks' GPU span (ranks) and the
	// host-side ones of the rank's wall time (overview): collect both, so
	// that one area's findings state the same bases as the report's.
	for _, need := range []string{"ranks", "overview"} {
		if !slices.Contains(names, need) {
			names = append(names, need)
		}
	}
	for _, area := range slices.Clone(names) {
		for _, need := range areaNeeds[area] {
			if !slices.Contains(names, need) {
				names = append(names, need)
			}
		}
	}
	b := evidence.NewBundle()
	b.Filter = f
	for k, v := range context {
		b.Context[k] = v
	}
	// The header's profile_memory, which says whether a trace without
	// [memory] events was captured without them (NULL: not written), and
	// device 0's numSms (the CU count on ROCm), which with the GFXIP
	// version and the memory names an AMD part the trace leaves unnamed
	// (evidence.RankInfo.GPUNumSMs, device.Identify), and how many devices
	// deviceProperties lists, the GPUs the process saw (gpu_count: a world
	// size that fits in it is one node, findings' hostLayout), and two of
	// the record counts Kineto logs in the trace's INFO lines: the
	// activity records it left out as outside the capture window
	// (kineto_out_of_range), and whether CUPTI stopped collecting early,
	// its buffers full (cupti_stopped_early; NULL where the trace has no
	// such line).
	tr, err := eng.Query(ctx, `SELECT * EXCLUDE (metadata), TRY_CAST(metadata->>'profile_memory' AS BOOLEAN) AS profile_memory,
			TRY_CAST(metadata->'deviceProperties'->0->>'numSms' AS INTEGER) AS gpu_num_sms,
			CAST(json_array_length(metadata->'deviceProperties') AS INTEGER) AS gpu_count,
			TRY_CAST(regexp_extract(CAST(metadata->'INFO' AS VARCHAR), 'Out-of-range = (\d+)', 1) AS BIGINT) AS kineto_out_of_range,
			TRY_CAST(regexp_extract(CAST(metadata->'INFO' AS VARCHAR), 'CUPTI stopped early\? = (\d+)', 1) AS INTEGER) AS cupti_stopped_early
		FROM traces WHERE ($1::VARCHAR = '' OR trace = $1::VARCHAR) ORDER BY trace, file_id, rank`, 0, f.Trace)
	if err != nil {
		return nil, fmt.Errorf("evidence: reading the traces table: %w", err)
	}
	tr.Name = "traces"
	b.Traces = tr
	if len(tr.Rows) == 0 {
		if f.Trace != "" {
			return nil, fmt.Errorf("evidence: no trace named %q is loaded (%%trace list shows them)", f.Trace)
		}
		return nil, fmt.Errorf("evidence: no trace is loaded (%%trace load PATH)")
	}
	if err := checkSlice(tr, f); err != nil {
		return nil, err
	}
	args := Params(f)
	// One collection at a time per database: the presets read the shared
	// evidence_base tables built here for this filter.
	mu := baseLock(eng)
	mu.Lock()
	defer mu.Unlock()
	// The presets are independent: run as many at once as slots allows,
	// then keep them in area order.
	tables := make([]*table.Table, len(names))
	errs := make([]error, len(names))
	built := false
	pass := func() error {
		if !built {
			if err := BuildEvidenceBase(ctx, eng, f); err != nil {
				return err
			}
			built = true
		}
		var wg sync.WaitGroup
		for _, i := range longestFirst(names) {
			if tables[i] != nil || (errs[i] != nil && !outOfMemory(errs[i])) {
				continue
			}
			// The slot is taken here, in turn: the presets start in
			// longestFirst's order.
			slots <- struct{}{}
			wg.Add(1)
			go func() {
				defer wg.Done()
				defer func() { <-slots }()
				tables[i], errs[i] = runPreset(ctx, eng, names[i], args)
				if names[i] == "capture" && errs[i] == nil {
					var lo []crossview.LeftOut
					tables[i], lo = splitIntervals(tables[i])
					if leftOut != nil {
						leftOut(lo)
					}
				}
			}()
		}
		wg.Wait()
		for _, err := range errs {
			if outOfMemory(err) {
				return err // the next limit runs what failed again
			}
		}
		return nil
	}
	// A preset's own error is returned below, in area order.
	if err := underLimits(ctx, eng, limits, pass); err != nil && (!built || !outOfMemory(err)) {
		return nil, err
	}
	for i, area := range names {
		if errs[i] != nil {
			return nil, errs[i]
		}
		b.Tables[area] = tables[i]
	}
	if err := checkSliceEvidence(b, f); err != nil {
		return nil, err
	}
	evidence.DetectGaps(b)
	rf := f
	rf.Trace, rf.HasRank, rf.WindowStartNs, rf.WindowEndNs = "", false, 0, 0 // applied in SQL already
	b.Findings = findings.Evaluate(evidence.Rollup(b, rf), b.Thresholds)
	return b, nil
}

// areaNeeds are the areas an area's rules read besides it, ranks and
// overview, so that one area's findings state what the report's do: the
// launch-bound rule weighs the launch waits of the gaps area over the span
// the capture area's exclusions leave (`tracebook evidence launch` had said
// "at most 0.0% of that span" where the report says 13.1%), and names the
// DataLoader time the ops area holds; the pageable-copy rule says how much
// GPU idle the copies' calls opened, from the sync area; the sync rule's
// fix reads the workload area (TorchRec's input dist needs its reads), and
// so do the host-bound and launch-bound findings (whether the operators
// carry their shapes, which adds host time, and the memory area, whether
// the profiler recorded every allocation); the host-bound finding follows
// a DataLoader issue whose time the ops area holds.
var areaNeeds = map[string][]string{"launch": {"gaps", "capture", "ops", "workload", "memory"}, "gaps": {"workload", "ops", "memory"}, "memcpy": {"sync"}, "sync": {"workload"}}

// presetCost ranks the presets by what they took at ×21 of the vLLM H100
// trace (ms, one sitting): the longest start first, so that the last to
// finish are short ones and the two slots end together. The 48 MB trace
// ranks them about the same. A preset not listed starts last.
var presetCost = map[string]int{"ops": 538, "collectives": 452, "capture": 330, "sync": 198, "ranks": 195,
	"overlap": 122, "workload": 95, "launch": 80, "gaps": 75, "steps": 57, "overview": 57, "graphs": 56,
	"kernels": 40, "memcpy": 22, "memory": 12}

// longestFirst returns the indexes of names by presetCost, highest first.
// The capture preset, which a report's cross-view waits for, keeps its
// place: started first, it ran beside the cross-view's query and their
// memory peaked together (mtia_single_rank: 267 against 218 MB, for 0.96×
// the vLLM H100 report's wall).
func longestFirst(names []string) []int {
	order := make([]int, len(names))
	for i := range order {
		order[i] = i
	}
	slices.SortStableFunc(order, func(a, b int) int { return presetCost[names[b]] - presetCost[names[a]] })
	return order
}

// presetWorkers is how many presets CollectEvidence (and PerfettoWindows
// its queries) runs at once: one per two cores, at most four. DuckDB runs
// each query on every core already. On a 2-core machine one preset at a
// time took the time four did, with less memory (48 MB vLLM trace, 5
// alternating pairs: `tracebook evidence all` wall 0.99×, CPU 0.87×, peak
// 0.86×; its report wall 1.0×, peak 0.9×); small queries parallelise
// little inside DuckDB, so more cores run more presets.
var presetWorkers = min(4, max(1, runtime.NumCPU()/2))

// Params returns the four parameters every preset takes: trace (empty =
// every trace), rank (-1 = every rank), window start and end in ns from the
// trace's first event (0 = open).
func Params(f evidence.Filter) []any {
	rank := -1
	if f.HasRank {
		rank = f.Rank
	}
	return []any{f.Trace, rank, f.WindowStartNs, f.WindowEndNs}
}

// BuildEvidenceBase runs sql/evidence_base.sql for the trace, rank and
// window of f: it (re)creates the tables evidence_base_steps and
// evidence_base_events that the presets read (each CREATE TABLE of the
// module runs as CREATE OR REPLACE TABLE). CollectEvidence calls it first;
// run it before a preset that INCLUDEs evidence_base is run on its own.
func BuildEvidenceBase(ctx context.Context, eng Engine, f evidence.Filter) error {
	p, ok := sql.Lookup(BaseModule)
	if !ok {
		return fmt.Errorf("evidence: sql/%s.sql is missing from this build", BaseModule)
	}
	args := Params(f)
	for _, stmt := range statements(p.SQL) {
		stmt = createRE.ReplaceAllString(stmt, "${1}CREATE OR REPLACE TABLE ")
		if _, err := eng.Query(ctx, stmt, 0, args[:paramCount(stmt)]...); err != nil {
			return fmt.Errorf("evidence %s: %w", BaseModule, err)
		}
	}
	return nil
}

// BaseModule is the SQL module every preset of an evidence area includes.
const BaseModule = "evidence_base"

var (
	createRE = regexp.MustCompile(`(?m)^(\s*)CREATE TABLE `)
	paramRE  = regexp.MustCompile(`\$([1-9])\b`)
	stmtEnd  = regexp.MustCompile(`;[ \t]*(\n|$)`)
	comments = regexp.MustCompile(`(?m)^\s*--.*$`)
)

// statements splits a SQL file into its statements: a statement ends with a
// semicolon at the end of a line; pieces holding only comments are dropped.
func statements(src string) []string {
	var out []string
	for _, s := range stmtEnd.Split(src, -1) {
		if strings.TrimSpace(comments.ReplaceAllString(s, "")) != "" {
			out = append(out, strings.TrimSpace(s))
		}
	}
	return out
}

// paramCount is the highest $N a statement uses: the presets that read
// evidence_base take fewer parameters than the four of Params, or none.
func paramCount(stmt string) int {
	n := 0
	for _, m := range paramRE.FindAllStringSubmatch(comments.ReplaceAllString(stmt, ""), -1) {
		if k := int(m[1][0] - '0'); k > n {
			n = k
		}
	}
	return n
}

// baseLocks holds one mutex per database: two collections on one database
// would replace each other's evidence_base tables.
var baseLocks sync.Map

func baseLock(eng Engine) *sync.Mutex {
	mu, _ := baseLocks.LoadOrStore(eng, &sync.Mutex{})
	return mu.(*sync.Mutex)
}

func resolveAreas(areas []string) ([]string, error) {
	if len(areas) == 0 {
		return nil, fmt.Errorf("evidence: name an area: %s or all", strings.Join(evidence.Areas, ", "))
	}
	var out []string
	seen := map[string]bool{}
	for _, a := range areas {
		list := []string{evidence.AreaPreset(a)}
		if a == "all" {
			list = evidence.Areas
		}
		for _, n := range list {
			// Only the areas' presets: the others (crossview, perfetto, ...)
			// take other parameters.
			if _, ok := sql.Lookup(n); !ok || !slices.Contains(evidence.Areas, n) {
				names := append(slices.Clip(evidence.Areas), "phases", "all")
				return nil, fmt.Errorf("evidence: unknown area %q%s (areas: %s)", a, suggest.DidYouMean(a, names, strconv.Quote), strings.Join(names, ", "))
			}
			if !seen[n] {
				seen[n] = true
				out = append(out, n)
			}
		}
	}
	return out, nil
}

// splitIntervals takes the interval rows out of the capture preset's
// table t: the merged intervals of its excluded and edge_sync kinds, which
// the capture gate leaves out of the slice the rules judge, by rank.
func splitIntervals(t *table.Table) (*table.Table, []crossview.LeftOut) {
	var out []crossview.LeftOut
	at := map[[2]any]int{}
	keep := t.Rows[:0:0]
	for r := range t.Rows {
		if evidence.Str(t, r, "kind") != "interval" {
			keep = append(keep, t.Rows[r])
			continue
		}
		tr, rank := evidence.Str(t, r, "trace"), int(evidence.Int(t, r, "rank"))
		k := [2]any{tr, rank}
		i, ok := at[k]
		if !ok {
			i = len(out)
			at[k] = i
			out = append(out, crossview.LeftOut{Trace: tr, Rank: rank})
		}
		iv := [2]int64{evidence.Int(t, r, "first_ns"), evidence.Int(t, r, "last_ns")}
		switch evidence.Str(t, r, "name") {
		case "excluded":
			out[i].Idle = append(out[i].Idle, iv)
		case "edge_sync":
			out[i].EdgeSyncs = append(out[i].EdgeSyncs, iv)
		}
	}
	t.Rows = keep
	t.Total = int64(len(keep))
	return t, out
}

// runPreset keeps the preset's rows as evidence_<area> and returns them with
// the units and docs of the preset's header.
func runPreset(ctx context.Context, eng Engine, area string, args []any) (*table.Table, error) {
	p, _ := sql.Lookup(area)
	t, ok, err := runPass(ctx, eng, p, args)
	if err != nil {
		return nil, err
	}
	if !ok {
		body := strings.TrimRight(strings.TrimSpace(p.SQL), ";")
		if _, err := eng.Query(ctx, "CREATE OR REPLACE TABLE evidence_"+area+" AS "+body, 0, args[:paramCount(body)]...); err != nil {
			return nil, fmt.Errorf("evidence %s: %w", area, err)
		}
		if t, err = eng.Query(ctx, "SELECT * FROM evidence_"+area, 0); err != nil {
			return nil, fmt.Errorf("evidence %s: %w", area, err)
		}
	}
	t.Name = area
	docs := map[string]sql.ColumnDoc{}
	for _, c := range p.Columns {
		docs[c.Name] = c
	}
	for i, c := range t.Columns {
		if d, ok := docs[c.Name]; ok {
			t.Columns[i].Unit, t.Columns[i].Doc = d.Unit, d.Doc
		}
	}
	return t, nil
}
