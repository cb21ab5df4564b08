package cells

import (
	"bytes"
	"context"
	"fmt"
	"io"
	"os"
	"slices"
	"sort"
	"strconv"
	"strings"

	"github.com/tracebook/tracebook/analysis/crossview"
	"github.com/tracebook/tracebook/analysis/diff"
	"github.com/tracebook/tracebook/analysis/evidence"
	"github.com/tracebook/tracebook/analysis/report"
)

// CollectDiffInput collects what a diff compares, for each of the loaded
// traces base and test under f (with f.Trace set to the trace): the
// evidence of every area and the cross-view of f, each side with its
// %context record (baseContext, testContext). With withSlices, each side also
// gets the cross-view of each rank (when it has 2 to MaxRankCrossViews
// ranks and f selects none) and of each phase (when its steps have several
// phases and f selects none), so that the offline page's rank and phase
// filters compare trees too. A side whose cross-view of f cannot be built
// has none, and the diff says the trees are not compared; a slice whose
// cross-view fails is left out. %diff and `tracebook diff` both call it.
func CollectDiffInput(ctx context.Context, eng Engine, base, test string, f evidence.Filter, baseContext, testContext map[string]string, withSlices bool) (*diff.Input, error) {
	in := &diff.Input{Filter: f}
	for i, name := range []string{base, test} {
		sf := f
		sf.Trace = name
		c := baseContext
		if i == 1 {
			c = testContext
		}
		b, err := CollectEvidence(ctx, eng, []string{"all"}, sf, c)
		if err != nil {
			return nil, fmt.Errorf("diff: %w", err)
		}
		side := diff.InputSide{Name: name, Bundle: b, CrossViews: []*crossview.Result{}}
		if cv, err := CrossView(ctx, eng, sf, crossview.DefaultOptions()); err == nil {
			side.CrossViews = append(side.CrossViews, cv)
			if withSlices {
				side.CrossViews = append(side.CrossViews, sliceCrossViews(ctx, eng, sf, b)...)
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

// sliceCrossViews returns a side's cross-views per rank and per phase, as
// CollectDiffInput says; f is the side's filter (its Trace set).
func sliceCrossViews(ctx context.Context, eng Engine, f evidence.Filter, b *evidence.Bundle) []*crossview.Result {
	var out []*crossview.Result
	if !f.HasRank {
		var ranks []int
		for _, ri := range evidence.Ranks(b.Traces) {
			if ri.Trace == f.Trace && !slices.Contains(ranks, ri.Rank) {
				ranks = append(ranks, ri.Rank)
			}
		}
		sort.Ints(ranks)
		if len(ranks) >= 2 && len(ranks) <= MaxRankCrossViews {
			for _, r := range ranks {
				rf := f
				rf.Rank, rf.HasRank = r, true
				if cv, err := CrossView(ctx, eng, rf, crossview.DefaultOptions()); err == nil {
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
				if cv, err := CrossView(ctx, eng, pf, crossview.DefaultOptions()); err == nil {
					out = append(out, cv)
				}
			}
		}
	}
	return out
}

// CollectDiff collects the input of the loaded traces base and test under f
// (CollectDiffInput, without the slices' cross-views) and compares them
// step-normalised (analysis/diff): what the page shows for f. Where the
// two %context records differ, the diff warns.
func CollectDiff(ctx context.Context, eng Engine, base, test string, f evidence.Filter, baseContext, testContext map[string]string) (*diff.Diff, error) {
	in, err := CollectDiffInput(ctx, eng, base, test, f, baseContext, testContext, false)
	if err != nil {
		return nil, err
	}
	return diff.CompareView(in, report.View{Filter: f})
}

// DiffPageWriter writes the single-file interactive diff page of an encoded
// diff input (diff.EncodeInput) for a view, under title. The composition
// root provides it (package wasm embeds the viewer module, whose
// render_diff re-runs the comparison in the page; cells does not import
// wasm).
type DiffPageWriter func(w io.Writer, input []byte, v report.View, title string) error

// DiffResult shows a diff as a cell output: Markdown as text/markdown and
// text/plain, and the HTML fragment (no script, every trace string escaped)
// as text/html. The context warning, when there is one, comes first in all
// three.
func DiffResult(d *diff.Diff) (*Result, error) {
	var md, frag bytes.Buffer
	if err := diff.Write(&md, d, diff.Markdown); err != nil {
		return nil, err
	}
	if err := diff.Write(&frag, d, diff.HTMLFragment); err != nil {
		return nil, err
	}
	return &Result{
		Data:     map[string]any{"text/markdown": md.String(), MIMEText: md.String(), MIMEHTML: frag.String()},
		Metadata: map[string]any{},
	}, nil
}

// ParseDiffContext reads a side's %context values as the options
// --base-context and --test-context write them, "KEY=VALUE[,KEY=VALUE...]",
// on top of record (which is not changed). Keys and values are checked as
// %context checks them.
func ParseDiffContext(record map[string]string, spec string) (map[string]string, error) {
	out := make(map[string]string, len(record))
	for k, v := range record {
		out[k] = v
	}
	for _, kv := range strings.Split(spec, ",") {
		if strings.TrimSpace(kv) == "" {
			continue
		}
		k, v, ok := strings.Cut(strings.TrimSpace(kv), "=")
		if !ok {
			return nil, usagef("diff context: %q is not KEY=VALUE", kv)
		}
		ck, known := canonicalContextKey(k)
		if !known {
			return nil, usagef("diff context: unknown key %q (keys: %s)", k, contextKeyList())
		}
		if v != "" && ck.integer {
			if n, err := strconv.Atoi(v); err != nil || n <= 0 {
				return nil, usagef("diff context: %s=%q is not a positive integer", ck.name, v)
			}
		}
		if v == "" {
			delete(out, ck.name)
		} else {
			out[ck.name] = v
		}
	}
	return out, nil
}

// DiffHook returns the %diff hook: `%diff BASE TEST [filter] [--md PATH]
// [--html PATH] [--base-context K=V,...] [--test-context K=V,...]`
// compares two loaded traces and shows the diff; --md writes it as
// Markdown, --html as the interactive offline page `tracebook diff -o`
// writes (writeHTML, over the same input: both sides with the cross-views
// of each rank and phase, so that the page's filters compare trees too).
// Both sides take the session's %context record; --base-context and
// --test-context set what differs between the two captures (tp=4,
// batch-size=32), and the diff warns about every key that differs.
// writeHTML may be nil: then --html fails with a sentence saying so.
func DiffHook(writeHTML DiffPageWriter) Hook {
	return func(ctx context.Context, s *Session, args []string, _ Publisher) (*Result, error) {
		f, rest, err := ParseFilter(args)
		if err != nil {
			return nil, err
		}
		if f.Trace != "" {
			return nil, usagef("%%diff names its two traces as BASE TEST, not with --trace")
		}
		opts, pos, err := parseOptions(lookupMagic("diff"), "%diff", rest)
		if err != nil {
			return nil, err
		}
		htmlPath, mdPath, baseSpec, testSpec := opts["html"], opts["md"], opts["base-context"], opts["test-context"]
		if len(pos) != 2 {
			return nil, usagef("%%diff takes two loaded traces, BASE TEST (%%trace list shows them), got %d", len(pos))
		}
		if htmlPath != "" && writeHTML == nil {
			// Said before the work: nothing else would need it.
			return nil, fmt.Errorf("%%diff --html needs a diff page writer, which this session was not given (the diff itself and --md work without one): %w", ErrNotAvailable)
		}
		baseCtx, err := ParseDiffContext(s.Context(), baseSpec)
		if err != nil {
			return nil, err
		}
		testCtx, err := ParseDiffContext(s.Context(), testSpec)
		if err != nil {
			return nil, err
		}
		in, err := CollectDiffInput(ctx, s.Engine(), pos[0], pos[1], f, baseCtx, testCtx, htmlPath != "")
		if err != nil {
			return nil, err
		}
		view := report.View{Filter: f}
		d, err := diff.CompareView(in, view)
		if err != nil {
			return nil, err
		}
		res, err := DiffResult(d)
		if err != nil {
			return nil, err
		}
		var notes bytes.Buffer
		if mdPath != "" {
			p := s.resolve(mdPath)
			if err := os.WriteFile(p, []byte(res.Data["text/markdown"].(string)), 0o644); err != nil {
				return nil, fmt.Errorf("%%diff: writing the Markdown diff: %w", err)
			}
			fmt.Fprintf(&notes, "Markdown diff written to %s\n", p)
		}
		if htmlPath != "" {
			data, err := diff.EncodeInput(in)
			if err != nil {
				return nil, err
			}
			var page bytes.Buffer
			if err := writeHTML(&page, data, view, d.Title()); err != nil {
				return nil, err
			}
			p := s.resolve(htmlPath)
			if err := os.WriteFile(p, page.Bytes(), 0o644); err != nil {
				return nil, fmt.Errorf("%%diff: writing the HTML diff: %w", err)
			}
			fmt.Fprintf(&notes, "HTML diff written to %s (%d bytes, opens offline; its rank and phase filters compare again)\n", p, page.Len())
		}
		if notes.Len() > 0 {
			res.Data[MIMEText] = notes.String() + "\n" + res.Data[MIMEText].(string)
		}
		return res, nil
	}
}
