package cli

import (
	"bytes"
	"context"
	"fmt"
	"io"
	"os"
	"path/filepath"
	"time"

	"github.com/tracebook/tracebook/analysis/evidence"
	"github.com/tracebook/tracebook/analysis/report"
	"github.com/tracebook/tracebook/analysis/trace"
	"github.com/tracebook/tracebook/cells"
	"github.com/tracebook/tracebook/internal/duck"
	"github.com/tracebook/tracebook/pipeline"
	"github.com/tracebook/tracebook/wasm"
	"github.com/tracebook/tracebook/wasm/host"
)

// SampleTrace is the trace `tracebook report` analyses when given none: a
// small real trace (HTA's AlexNet critical-path test trace, MIT license, see
// testdata/README.md) with synchronisation events, so that the first report
// a user sees has something to say. The tracebook command (the repository
// root's main.go) embeds testdata/<SampleTracePath> and sets it before
// calling Main: go:embed cannot reach the repository's testdata from here.
var SampleTrace []byte

// SampleTracePath is where the sample trace lives under the repository's
// testdata.
const SampleTracePath = "hta/critical_path_alexnet/" + sampleTraceName

const sampleTraceName = "benchmark_result_2869224_1695835535_trace.json.gz"

func init() {
	sessionHooks = append(sessionHooks, func(s *cells.Session) {
		s.Report = cells.ReportHook(func(data []byte, v report.View) (cells.HTMLPage, error) {
			return htmlPage(data, v)
		})
	})
}

// htmlPage draws the single-file report of an encoded source for a view,
// but for the findings' Perfetto files, with the embedded viewer module
// (none in a build without the viewer tag: the report says so).
func htmlPage(data []byte, v report.View) (*wasm.ReportPage, error) {
	return wasm.NewReportPage(data, v, wasm.Options{Title: "tracebook report"})
}

// reportArgs are the report command's own arguments.
type reportArgs struct {
	out, md, check string
	from           string // a notebook saved with a %report output (cmd_run.go)
	perfetto       string // a directory for the findings' Perfetto files
}

// parseReportArgs takes the report's own options and the load options
// (--cache, -q) out of args; the filter and the trace paths remain in the
// parsed arguments' rest.
func parseReportArgs(args []string) (reportArgs, loadFlags, parsedArgs, error) {
	p, lf, err := parseLoadArgs("report", args, options{values: []string{"out|o", "md", "check", "from", "perfetto"}})
	a := reportArgs{out: p.values["out"], md: p.values["md"], check: p.values["check"], from: p.values["from"], perfetto: p.values["perfetto"]}
	return a, lf, p, err
}

func runReport(args []string, stdout, stderr io.Writer) error {
	a, lf, p, err := parseReportArgs(args)
	if err != nil {
		return err
	}
	ctx := context.Background()
	if a.check != "" {
		page, err := os.ReadFile(a.check)
		if err != nil {
			return err
		}
		start := time.Now()
		if err := host.Check(ctx, page, nil); err != nil {
			return fmt.Errorf("check %s: %w", a.check, err)
		}
		fmt.Fprintf(stdout, "%s: the viewer module renders exactly what the native code renders (%.1f s)\n", a.check, time.Since(start).Seconds())
		return nil
	}
	f, paths, err := p.filter("report")
	if err != nil {
		return err
	}
	sample := ""
	if len(paths) == 0 && a.from == "" && lf.db == "" {
		if len(SampleTrace) == 0 {
			return fmt.Errorf("no trace given, and this build embeds no sample trace")
		}
		// A fixed place, so that the report names the same file every run
		// (and the parse cache recognises it).
		dir := filepath.Join(os.TempDir(), "tracebook-sample")
		if err := os.MkdirAll(dir, 0o755); err != nil {
			return err
		}
		p := filepath.Join(dir, sampleTraceName)
		if err := os.WriteFile(p, SampleTrace, 0o644); err != nil {
			return err
		}
		paths = []string{p}
		sample = p
		fmt.Fprintf(stderr, "tracebook report: no trace given; analysing the sample trace %s (HTA's AlexNet test trace, MIT)\n", sampleTraceName)
	}
	if a.out == "" && a.md == "" && a.perfetto == "" {
		a.out = "report.html"
	}

	src, page, err := reportSource(ctx, a.from, paths, f, lf, stderr)
	if err != nil {
		return err
	}
	if sample != "" && src.Bundle != nil {
		page = nil // drawn with the copy's path
		// The report names the sample, not the temporary copy it was read from.
		if t, c := src.Bundle.Traces, src.Bundle.Traces.Col("path"); c >= 0 {
			for _, r := range t.Rows {
				if c < len(r) && r[c] == sample {
					r[c] = sampleTraceName + " (the sample embedded in tracebook)"
				}
			}
		}
	}
	view := report.View{Filter: f}
	if a.md != "" {
		var md bytes.Buffer
		if err := report.GenerateView(&md, src, view, report.Markdown); err != nil {
			return err
		}
		if err := os.WriteFile(a.md, md.Bytes(), 0o644); err != nil {
			return err
		}
		fmt.Fprintf(stdout, "wrote %s (%d bytes)\n", a.md, md.Len())
	}
	if a.out != "" {
		if page == nil {
			if page, err = reportPage(src, view); err != nil {
				return err
			}
		}
		var html bytes.Buffer
		if err := page.Write(&html, src.Perfetto); err != nil {
			return err
		}
		if err := os.WriteFile(a.out, html.Bytes(), 0o644); err != nil {
			return err
		}
		fmt.Fprintf(stdout, "wrote %s (%d bytes)\n", a.out, html.Len())
		if wasm.Module() == nil {
			fmt.Fprintf(stderr, "tracebook report: %v; the report is static\n", wasm.ErrNoModule)
		}
	}
	if a.perfetto != "" {
		if err := writePerfettoDir(a.perfetto, src, stdout); err != nil {
			return err
		}
	}
	return nil
}

// writePerfettoDir writes the findings' Perfetto files into dir, the same
// files the HTML report embeds.
func writePerfettoDir(dir string, src *report.Source, stdout io.Writer) error {
	if len(src.Windows) > 0 && src.Perfetto == nil {
		return fmt.Errorf("--perfetto needs the traces: a report rebuilt --from a notebook has no events to export")
	}
	if err := pipeline.WritePerfettoFiles(dir, src.Perfetto); err != nil {
		return err
	}
	fmt.Fprintf(stdout, "wrote %d Perfetto file(s) to %s (%s)\n", len(src.Perfetto), dir, report.PerfettoHint)
	return nil
}

// reportPage draws the HTML report's page for src and view but for its
// Perfetto files (htmlPage).
func reportPage(src *report.Source, view report.View) (*wasm.ReportPage, error) {
	data, err := report.EncodeOffline(src)
	if err != nil {
		return nil, err
	}
	return htmlPage(data, view)
}

// collectReport loads the traces into an in-memory database (with lf's
// parse cache, and progress on stderr) and collects the report's evidence
// and cross-views through the notebook's code, and the Perfetto files of
// its findings. The page comes back as collectLoaded drew it, or nil.
func collectReport(ctx context.Context, paths []string, f evidence.Filter, lf loadFlags, stderr io.Writer) (*report.Source, *wasm.ReportPage, error) {
	ctx, db, err := openTraces(ctx, lf, paths, forAnalysis, stderr)
	if err != nil {
		return nil, nil, err
	}
	defer db.Close()
	if _, err := db.load(ctx, paths, trace.LoadOptions{}); err != nil {
		return nil, nil, err
	}
	defer db.stage("analysing: evidence, cross-views and the findings' Perfetto windows")()
	return collectLoaded(ctx, db.DB, f, func() { db.Close() })
}

// collectLoaded is collectReport once the traces are loaded into db. Once
// every row the report needs is read, it calls release (nil: none), which
// may close db: the page is drawn (here, for the Perfetto files' budget)
// without DuckDB's memory beside it (the report of the 87 MB mtia trace
// peaked during that drawing). The page, for the filter's view, comes back
// for `tracebook report` to write with the files; nil when the findings
// have no window.
func collectLoaded(ctx context.Context, db *duck.DB, f evidence.Filter, release func()) (*report.Source, *wasm.ReportPage, error) {
	src, err := pipeline.CollectReport(ctx, db, f, nil)
	if err != nil {
		return nil, nil, err
	}
	if err := pipeline.ReadPerfettoRows(ctx, db, src); err != nil {
		return nil, nil, err
	}
	if release != nil {
		release()
	}
	// The Perfetto files take what the HTML report leaves under its limit.
	if len(src.Windows) == 0 {
		return src, nil, nil
	}
	var page *wasm.ReportPage
	err = pipeline.AddPerfettoForPage(ctx, nil, src, func() (int, error) {
		var err error
		if page, err = reportPage(src, report.View{Filter: f}); err != nil {
			return 0, err
		}
		return page.Size()
	})
	if err != nil {
		return nil, nil, err
	}
	return src, page, nil
}
