package main

import (
	"bytes"
	"context"
	"errors"
	"fmt"
	"io"
	"os"
	"os/signal"
	"slices"
	"sort"
	"strings"
	"time"

	"github.com/tracebook/tracebook/analysis/crossview"
	"github.com/tracebook/tracebook/analysis/diff"
	"github.com/tracebook/tracebook/analysis/evidence"
	"github.com/tracebook/tracebook/analysis/report"
	"github.com/tracebook/tracebook/analysis/trace"
	"github.com/tracebook/tracebook/cells"
	"github.com/tracebook/tracebook/internal/duck"
	"github.com/tracebook/tracebook/wasm"
	"github.com/tracebook/tracebook/wasm/host"
)

func init() {
	register(command{
		name:  "diff",
		usage: "diff BASE TEST [-o diff.html] [--md diff.md] [--base-context K=V,...] [--test-context K=V,...] [filter] | --check FILE.html",
		help:  "did the fix work? compare two traces of the same workload, step-normalised (Markdown on stdout without -o/--md; -o writes one offline page whose rank and phase filters recompute the diff)",
		run:   runDiff,
	})
	sessionHooks = append(sessionHooks, func(s *cells.Session) {
		s.Diff = cells.DiffHook
	})
}

func runDiff(args []string, stdout, stderr io.Writer) error {
	usage := fmt.Errorf("usage: tracebook %s", commands["diff"].usage)
	var out, mdPath, baseSpec, testSpec, check string
	var rest []string
	for i := 0; i < len(args); i++ {
		arg := args[i]
		if arg == "-h" || arg == "--help" {
			return usage
		}
		name, value, inline := strings.Cut(strings.TrimLeft(arg, "-"), "=")
		if !strings.HasPrefix(arg, "-") || (name != "o" && name != "out" && name != "md" && name != "base-context" && name != "test-context" && name != "check") {
			rest = append(rest, arg)
			continue
		}
		if !inline {
			if i+1 >= len(args) {
				return fmt.Errorf("%s needs a PATH", arg)
			}
			i++
			value = args[i]
		}
		switch name {
		case "md":
			mdPath = value
		case "base-context":
			baseSpec = value
		case "test-context":
			testSpec = value
		case "check":
			check = value
		default:
			out = value
		}
	}
	if check != "" {
		return checkDiffPage(check, stdout)
	}
	baseCtx, err := cells.ParseDiffContext(nil, baseSpec)
	if err != nil {
		return err
	}
	testCtx, err := cells.ParseDiffContext(nil, testSpec)
	if err != nil {
		return err
	}
	f, paths, err := cells.ParseFilter(rest)
	if err != nil {
		return err
	}
	for _, p := range paths {
		if strings.HasPrefix(p, "-") {
			return fmt.Errorf("unknown option %s (%v)", p, usage)
		}
	}
	if len(paths) != 2 {
		return usage
	}
	if f.Trace != "" {
		return fmt.Errorf("diff: BASE and TEST name the traces; --trace does not apply")
	}
	ctx, stop := signal.NotifyContext(context.Background(), os.Interrupt)
	defer stop()
	in, err := collectDiff(ctx, paths[0], paths[1], f, baseCtx, testCtx, out != "")
	if err != nil {
		return err
	}
	view := report.View{Filter: f}
	d, err := diff.CompareView(in, view)
	if err != nil {
		return err
	}
	if mdPath == "" && out == "" {
		return diff.Write(stdout, d, diff.Markdown)
	}
	if w := d.Warning(); w != "" {
		fmt.Fprintln(stderr, w)
	}
	fmt.Fprintln(stdout, d.Headline())
	if mdPath != "" {
		var md bytes.Buffer
		if err := diff.Write(&md, d, diff.Markdown); err != nil {
			return err
		}
		if err := os.WriteFile(mdPath, md.Bytes(), 0o644); err != nil {
			return err
		}
		fmt.Fprintf(stdout, "wrote %s (%d bytes)\n", mdPath, md.Len())
	}
	if out != "" {
		data, err := diff.EncodeInput(in)
		if err != nil {
			return err
		}
		var page bytes.Buffer
		if err := wasm.WriteDiff(&page, data, view, wasm.Options{Title: d.Title()}); err != nil {
			return err
		}
		if err := os.WriteFile(out, page.Bytes(), 0o644); err != nil {
			return err
		}
		fmt.Fprintf(stdout, "wrote %s (%d bytes)\n", out, page.Len())
		if wasm.Module() == nil {
			fmt.Fprintf(stderr, "tracebook diff: %v; the diff page is static\n", wasm.ErrNoModule)
		}
	}
	return nil
}

// checkDiffPage re-runs the parity check on a written diff page: the
// static diff, the native rendering of its input and the module's are the
// same bytes.
func checkDiffPage(path string, stdout io.Writer) error {
	page, err := os.ReadFile(path)
	if err != nil {
		return err
	}
	start := time.Now()
	if err := host.CheckDiff(context.Background(), page, nil); err != nil {
		return fmt.Errorf("check %s: %w", path, err)
	}
	fmt.Fprintf(stdout, "%s: the viewer module renders exactly what the native code renders (%.1f s)\n", path, time.Since(start).Seconds())
	return nil
}

// collectDiff loads the two traces into an in-memory database (the test
// under another name when both paths derive the same one) and collects
// each side's evidence and cross-view through the notebook's code, each
// side with its %context values: what %diff compares (cells.CollectDiff).
// With slices, it adds the cross-views of each rank (up to
// cells.MaxRankCrossViews ranks) and of each phase, so that the page's
// rank and phase filters compare trees too.
func collectDiff(ctx context.Context, base, test string, f evidence.Filter, baseCtx, testCtx map[string]string, withSlices bool) (*diff.Input, error) {
	db, err := duck.Open("", duck.Options{})
	if err != nil {
		return nil, err
	}
	defer db.Close()
	b, err := db.Load(ctx, []string{base}, trace.LoadOptions{}, nil)
	if err != nil {
		return nil, err
	}
	t, err := db.Load(ctx, []string{test}, trace.LoadOptions{}, nil)
	if errors.Is(err, duck.ErrDuplicateTrace) {
		t, err = db.Load(ctx, []string{test}, trace.LoadOptions{Name: b.Trace + "-test"}, nil)
	}
	if err != nil {
		return nil, err
	}
	in := &diff.Input{Filter: f}
	for i, name := range []string{b.Trace, t.Trace} {
		sf := f
		sf.Trace = name
		c := baseCtx
		if i == 1 {
			c = testCtx
		}
		bundle, err := cells.CollectEvidence(ctx, db, []string{"all"}, sf, c)
		if err != nil {
			return nil, fmt.Errorf("diff: %w", err)
		}
		side := diff.InputSide{Name: name, Bundle: bundle, CrossViews: []*crossview.Result{}}
		if cv, err := cells.CrossView(ctx, db, sf, crossview.DefaultOptions()); err == nil {
			side.CrossViews = append(side.CrossViews, cv)
			if withSlices {
				side.CrossViews = append(side.CrossViews, sliceCrossViews(ctx, db, sf, bundle)...)
			}
		}
		if i == 0 {
			in.Base = side
		} else {
			in.Test = side
		}
	}
	return in, nil
}

// sliceCrossViews returns a side's cross-views per rank (when it has 2 to
// cells.MaxRankCrossViews ranks and f none) and per phase (when its steps
// have several phases and f none); a slice whose cross-view fails is left
// out, and the diff of that slice says the trees are not compared.
func sliceCrossViews(ctx context.Context, db *duck.DB, f evidence.Filter, b *evidence.Bundle) []*crossview.Result {
	var out []*crossview.Result
	if !f.HasRank {
		var ranks []int
		for _, ri := range evidence.Ranks(b.Traces) {
			if ri.Trace == f.Trace && !slices.Contains(ranks, ri.Rank) {
				ranks = append(ranks, ri.Rank)
			}
		}
		sort.Ints(ranks)
		if len(ranks) >= 2 && len(ranks) <= cells.MaxRankCrossViews {
			for _, r := range ranks {
				rf := f
				rf.Rank, rf.HasRank = r, true
				if cv, err := cells.CrossView(ctx, db, rf, crossview.DefaultOptions()); err == nil {
					out = append(out, cv)
				}
			}
		}
	}
	if f.Phase == "" {
		var phases []string
		if t := b.Table("steps"); t != nil && t.Col("phase") >= 0 {
			for r := range t.Rows {
				if ph := evidence.Str(t, r, "phase"); ph != "" && !slices.Contains(phases, ph) {
					phases = append(phases, ph)
				}
			}
		}
		sort.Strings(phases)
		if len(phases) >= 2 {
			for _, ph := range phases {
				pf := f
				pf.Phase = ph
				if cv, err := cells.CrossView(ctx, db, pf, crossview.DefaultOptions()); err == nil {
					out = append(out, cv)
				}
			}
		}
	}
	return out
}
