package cells

import (
	"context"
	"fmt"
	"strings"

	"github.com/tracebook/tracebook/analysis/evidence"
	"github.com/tracebook/tracebook/analysis/findings"
	"github.com/tracebook/tracebook/analysis/table"
	"github.com/tracebook/tracebook/sql"
)

// CollectEvidence runs the presets of areas ("all" = every area, "phases" =
// steps) under f and returns the bundle: the traces' metadata, each area's
// mergeable rows with the units of its preset header, the evidence gaps,
// the findings for f and the %context values. Each area's rows are also kept
// in the database as the table evidence_<area>, so a SQL cell can re-query
// them. The trace, rank and window of f reach SQL as parameters; step,
// phase and stream are applied by the rollup (analysis/evidence).
func CollectEvidence(ctx context.Context, eng Engine, areas []string, f evidence.Filter, context map[string]string) (*evidence.Bundle, error) {
	if eng == nil {
		return nil, fmt.Errorf("evidence: no database")
	}
	names, err := resolveAreas(areas)
	if err != nil {
		return nil, err
	}
	b := evidence.NewBundle()
	b.Filter = f
	for k, v := range context {
		b.Context[k] = v
	}
	tr, err := eng.Query(ctx, `SELECT * EXCLUDE (metadata) FROM traces WHERE ($1::VARCHAR = '' OR trace = $1::VARCHAR) ORDER BY trace, file_id, rank`, 0, f.Trace)
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
	args := Params(f)
	for _, area := range names {
		t, err := runPreset(ctx, eng, area, args)
		if err != nil {
			return nil, err
		}
		b.Tables[area] = t
	}
	evidence.DetectGaps(b)
	rf := f
	rf.Trace, rf.HasRank, rf.WindowStartNs, rf.WindowEndNs = "", false, 0, 0 // applied in SQL already
	b.Findings = findings.Evaluate(evidence.Rollup(b, rf), b.Thresholds)
	return b, nil
}

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
			if _, ok := sql.Lookup(n); !ok {
				return nil, fmt.Errorf("evidence: unknown area %q (areas: %s, all)", a, strings.Join(evidence.Areas, ", "))
			}
			if !seen[n] {
				seen[n] = true
				out = append(out, n)
			}
		}
	}
	return out, nil
}

// runPreset keeps the preset's rows as evidence_<area> and returns them with
// the units and docs of the preset's header.
func runPreset(ctx context.Context, eng Engine, area string, args []any) (*table.Table, error) {
	p, _ := sql.Lookup(area)
	body := strings.TrimRight(strings.TrimSpace(p.SQL), ";")
	if _, err := eng.Query(ctx, "CREATE OR REPLACE TABLE evidence_"+area+" AS "+body, 0, args...); err != nil {
		return nil, fmt.Errorf("evidence %s: %w", area, err)
	}
	t, err := eng.Query(ctx, "SELECT * FROM evidence_"+area, 0)
	if err != nil {
		return nil, fmt.Errorf("evidence %s: %w", area, err)
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
