package cli

import (
	"bytes"
	"context"
	"errors"
	"fmt"
	"io"
	"os"
	"time"

	"github.com/tracebook/tracebook/analysis/diff"
	"github.com/tracebook/tracebook/analysis/evidence"
	"github.com/tracebook/tracebook/analysis/report"
	"github.com/tracebook/tracebook/analysis/trace"
	"github.com/tracebook/tracebook/cells"
	"github.com/tracebook/tracebook/internal/duck"
	"github.com/tracebook/tracebook/pipeline"
	"github.com/tracebook/tracebook/wasm"
	"github.com/tracebook/tracebook/wasm/host"
)

func init() {
	sessionHooks = append(sessionHooks, func(s *cells.Session) {
		s.Diff = cells.DiffHook(diffPageWriter(nil))
	})
}

// diffPageWriter returns the writer of the interactive diff page that
// `tracebook diff -o` and %diff --html share: wasm.WriteDiff with module
// (nil = the embedded one; none in a build without the viewer tag, and
// the page then says it is static).
func diffPageWriter(module []byte) cells.DiffPageWriter {
	return func(w io.Writer, input []byte, v report.View, title string) error {
		return wasm.WriteDiff(w, input, v, wasm.Options{Title: title, Module: module})
	}
}

func runDiff(args []string, stdout, stderr io.Writer) error {
	usage := fmt.Errorf("usage: tracebook %s", commands["diff"].usage)
	p, lf, err := parseLoadArgs("diff", args, options{values: []string{"out|o", "md", "base-context", "test-context", "check"}})
	if err != nil {
		return err
	}
	out, mdPath, check := p.values["out"], p.values["md"], p.values["check"]
	if check != "" {
		return checkDiffPage(check, stdout)
	}
	baseCtx, err := cells.ParseDiffContext(nil, p.values["base-context"])
	if err != nil {
		return err
	}
	testCtx, err := cells.ParseDiffContext(nil, p.values["test-context"])
	if err != nil {
		return err
	}
	f, paths, err := p.filter("diff")
	if err != nil {
		return err
	}
	if len(paths) != 2 {
		return usage
	}
	if f.Trace != "" {
		return fmt.Errorf("diff: BASE and TEST name the traces; --trace does not apply")
	}
	in, err := collectDiff(context.Background(), paths[0], paths[1], f, baseCtx, testCtx, out != "", lf, stderr)
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
		if err := diffPageWriter(nil)(&page, data, view, d.Title()); err != nil {
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

// collectDiff loads the two traces into an in-memory database (with lf's
// parse cache, and progress on stderr; the test under another name when
// both paths derive the same one) and collects what %diff collects
// (pipeline.CollectDiffInput), each side with its %context values; with
// slices, the cross-views of each rank and phase too, so that the page's
// rank and phase filters compare trees.
func collectDiff(ctx context.Context, base, test string, f evidence.Filter, baseCtx, testCtx map[string]string, withSlices bool, lf loadFlags, stderr io.Writer) (*diff.Input, error) {
	ctx, db, err := openTraces(ctx, lf, []string{base, test}, forAnalysis, stderr)
	if err != nil {
		return nil, err
	}
	defer db.Close()
	b, err := db.load(ctx, []string{base}, trace.LoadOptions{})
	if err != nil {
		return nil, err
	}
	t, err := db.load(ctx, []string{test}, trace.LoadOptions{})
	if errors.Is(err, duck.ErrDuplicateTrace) {
		t, err = db.load(ctx, []string{test}, trace.LoadOptions{Name: b.Trace + "-test"})
	}
	if err != nil {
		return nil, err
	}
	defer db.stage("analysing: evidence and cross-views of both traces")()
	return pipeline.CollectDiffInput(ctx, db.DB, b.Trace, t.Trace, f, baseCtx, testCtx, withSlices)
}
