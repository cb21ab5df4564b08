package evidence_test

import (
	"fmt"
	"go/format"
	"sort"
	"strings"
	"testing"

	"github.com/tracebook/tracebook/analysis/evidence"
	"github.com/tracebook/tracebook/analysis/table"
	"github.com/tracebook/tracebook/internal/testutil"
	"github.com/tracebook/tracebook/sql"
)

var mergeNames = map[evidence.Merge]string{
	evidence.MergeKey: "key", evidence.MergeSlice: "slice", evidence.MergeSum: "sum", evidence.MergeMin: "min",
	evidence.MergeMax: "max", evidence.MergeHist: "hist", evidence.MergeArgmax: "argmax", evidence.MergeDerived: "derived",
	evidence.MergeSteps: "steps",
}

// TestMergeSpec pins how every column of every merged area merges, as
// MergeOf derives it from the presets' headers: a header edit that changes
// how the rollup and the single-file report merge a column shows here.
func TestMergeSpec(t *testing.T) {
	want := map[string]string{
		"kernels": "trace=key rank=key step=slice phase=slice stream=slice name=key class=key count=sum total_ns=sum min_ns=min max_ns=max hist=hist pre_window_ns=sum graph_ns=sum",
		"sync": "trace=key rank=key step=slice phase=slice stream=slice call=key op=key trigger=key direction=key pageable=key blocking=key edge=key " +
			"count=sum blocked_ns=sum max_blocked_ns=max gaps=sum gpu_gap_ns=sum max_gap_ns=max bytes=sum held_ns=sum one_time_ns=sum dist_ns=sum upload_blocked_ns=sum",
		"ops": "trace=key rank=key step=slice phase=slice name=key count=sum incl_ns=sum self_ns=sum max_ns=max launches=sum gpu_events=sum gpu_ns=sum annotation=key",
		"ranks": "trace=key rank=key step=steps phase=slice events=sum first_ns=min last_ns=max busy_ns=sum idle_ns=sum host_wait_ns=sum host_wait_untraced_ns=sum unlaunched_idle_ns=sum compute_ns=sum " +
			"comm_ns=sum mem_ns=sum comm_comp_ns=sum kernel_ns=sum step_ns=sum",
		"memcpy": "trace=key rank=key step=slice phase=slice stream=slice kind=key direction=key src=key dst=key call=key sync=key " +
			"count=sum bytes=sum total_ns=sum host_ns=sum held_ns=sum one_time_ns=sum max_ns=max",
		"gaps": "trace=key rank=key step=slice phase=slice stream=key category=key count=sum idle_ns=sum max_ns=max max_at_ns=argmax(max_ns) hist=hist",
		"launch": "trace=key rank=key step=slice phase=slice stream=slice call=key launches=sum with_gpu=sum cpu_ns=sum gpu_ns=sum delay_ns=sum " +
			"hta_delay_ns=sum short=sum short_cpu_ns=sum runtime_outliers=sum delay_outliers=sum min_cpu_ns=min max_cpu_ns=max min_delay_ns=min max_delay_ns=max cpu_hist=hist delay_hist=hist",
		"overlap": "trace=key rank=key step=slice phase=slice comm_ns=sum compute_ns=sum overlap_ns=sum comm_overlap_pct=derived comm_kernels=sum",
		"graphs": "trace=key rank=key step=slice phase=slice graph=key launches=sum empty_launches=sum kernels=sum min_per_launch=min " +
			"max_per_launch=max gpu_ns=sum span_ns=sum",
		"memory": "trace=key rank=key step=slice phase=slice device=key allocs=sum frees=sum alloc_bytes=sum freed_bytes=sum peak_allocated=max " +
			"peak_reserved=max total_mem=max free_calls=sum free_ns=sum",
		"capture":  "trace=key rank=key kind=key name=key count=sum total_ns=sum max_ns=max idle_ns=sum span_ns=sum first_ns=min last_ns=max steps=sum",
		"workload": "trace=key rank=key feature=key example=key count=sum total_ns=sum covered_ns=sum gemm_flops=sum gemm_bytes=sum",
		"collectives": "trace=key rank=key collective=key pg=key count=sum total_ns=sum name_hint=sum instances=sum matched=sum matched_ns=sum " +
			"wait_ns=sum transfer_ns=sum late=sum lag_ns=sum caused_ns=sum entry_wait_ns=sum late_peer=argmax(late_peer_n) late_peer_n=max group_size=max " +
			"bytes=sum sized=sum sized_bytes=sum sized_transfer_ns=sum max_elem_bytes=max",
	}
	for _, area := range evidence.Areas {
		p, ok := sql.Lookup(area)
		if !ok {
			t.Fatalf("area %s has no preset", area)
		}
		if area == "overview" || area == "steps" {
			if evidence.Merged(area) || !p.Unmerged {
				t.Errorf("%s: its rows must pass through the rollup (MERGE: none)", area)
			}
			continue
		}
		if !evidence.Merged(area) {
			t.Errorf("%s: its rows do not merge", area)
		}
		documented := map[string]bool{}
		var got []string
		for _, c := range p.Columns {
			documented[c.Name] = true
			m := evidence.MergeOf(area, table.Column{Name: c.Name})
			s := c.Name + "=" + mergeNames[m.Merge]
			if m.Merge == evidence.MergeArgmax {
				s += "(" + m.By + ")"
			}
			got = append(got, s)
		}
		for col := range p.Merge {
			if !documented[col] {
				t.Errorf("%s: the MERGE line names %s, which the header does not document", area, col)
			}
		}
		if strings.Join(got, " ") != want[area] {
			t.Errorf("%s merges\n got  %s\n want %s", area, strings.Join(got, " "), want[area])
		}
	}
	// A table that is no area passes through; a column the header does not
	// document merges by the unit it carries.
	if evidence.Merged("my_table") {
		t.Error("a table that is no area merges")
	}
	if m := evidence.MergeOf("kernels", table.Column{Name: "extra_ns", Unit: "DURATION_NS"}); m.Merge != evidence.MergeSum {
		t.Errorf("an undocumented DURATION_NS column merges as %v, want a sum", mergeNames[m.Merge])
	}
}

// TestRollupKeepsEveryDocumentedColumn: a merged area's rolled-up table
// holds every column its header documents except the slices and shares
// the rollup merges over or recomputes (nothing is dropped because a list
// forgot it).
func TestRollupKeepsEveryDocumentedColumn(t *testing.T) {
	for _, area := range evidence.Areas {
		if !evidence.Merged(area) {
			continue
		}
		p, _ := sql.Lookup(area)
		src := &table.Table{Name: area}
		row := []any{}
		for _, c := range p.Columns {
			src.Columns = append(src.Columns, table.Column{Name: c.Name, Unit: c.Unit})
			switch {
			case c.Name == "trace":
				row = append(row, "t")
			case c.Unit == "TEXT":
				row = append(row, "x")
			case c.Unit == evidence.HistUnit:
				row = append(row, "")
			default:
				row = append(row, int64(1))
			}
		}
		src.Rows = [][]any{row}
		out := evidence.RollupTable(area, src, evidence.Filter{}, nil)
		for _, c := range p.Columns {
			m := evidence.MergeOf(area, table.Column{Name: c.Name})
			name := c.Name
			if m.Merge == evidence.MergeSteps {
				name = "steps"
			}
			kept := out.Col(name) >= 0
			dropped := m.Merge == evidence.MergeSlice
			if kept == dropped && m.Merge != evidence.MergeDerived {
				t.Errorf("%s.%s (%s): kept %v", area, c.Name, mergeNames[m.Merge], kept)
			}
		}
	}
}

// TestPresetHeaders writes the part of the area presets' headers that the
// rollup reads (each column's unit and the MERGE line) into headers_gen.go,
// and fails when that file differs from the headers (run with -update).
func TestPresetHeaders(t *testing.T) {
	var b strings.Builder
	b.WriteString("// Code generated by TestPresetHeaders (go test ./analysis/evidence -run TestPresetHeaders -update)\n")
	b.WriteString("// from the headers of sql/*.sql; DO NOT EDIT.\n\npackage evidence\n\n")
	b.WriteString("// presetHeaders holds, per evidence area, the header's MERGE line and each\n// column's documented unit.\n")
	b.WriteString("var presetHeaders = []presetHeader{\n")
	for _, area := range evidence.Areas {
		p, ok := sql.Lookup(area)
		if !ok {
			t.Fatalf("area %s has no preset", area)
		}
		fmt.Fprintf(&b, "\t{area: %q", area)
		if p.Unmerged {
			b.WriteString(", unmerged: true")
		}
		if len(p.Merge) > 0 {
			var cols []string
			for c := range p.Merge {
				cols = append(cols, c)
			}
			sort.Strings(cols)
			b.WriteString(",\n\t\trules: []string{")
			for i, c := range cols {
				if i > 0 {
					b.WriteString(", ")
				}
				fmt.Fprintf(&b, "%q, %q", c, p.Merge[c])
			}
			b.WriteString("}")
		}
		b.WriteString(",\n\t\tunits: []string{")
		for i, c := range p.Columns {
			if i > 0 {
				b.WriteString(",")
			}
			fmt.Fprintf(&b, "\n\t\t\t%q, %q", c.Name, c.Unit)
		}
		b.WriteString(",\n\t\t}},\n")
	}
	b.WriteString("}\n")
	src, err := format.Source([]byte(b.String()))
	if err != nil {
		t.Fatalf("the generated file does not parse: %v\n%s", err, b.String())
	}
	testutil.Golden(t, "headers_gen.go", src)
}
