package cli

import (
	"context"
	"fmt"
	"io"
	"strconv"

	"github.com/tracebook/tracebook/analysis/crossview"
	"github.com/tracebook/tracebook/analysis/trace"
	"github.com/tracebook/tracebook/pipeline"
)

// crossviewArgs are the crossview command's own options.
type crossviewArgs struct {
	opts   crossview.Options
	format string
	view   string
	load   loadFlags // --cache and -q
}

// parseCrossviewArgs takes the command's own options out of args; the
// filter (--trace --rank --window --phase --stream, as in every magic) and
// the trace paths remain in the parsed arguments' rest. --view chooses the
// tree of the folded format.
func parseCrossviewArgs(args []string) (crossviewArgs, parsedArgs, error) {
	a := crossviewArgs{opts: crossview.DefaultOptions(), format: crossview.FormatTree, view: "gpu"}
	p, lf, err := parseLoadArgs("crossview", args, options{values: []string{"depth", "min-pct", "format", "view"}})
	if err != nil {
		return a, p, err
	}
	a.load = lf
	if v, ok := p.values["depth"]; ok {
		n, err := strconv.Atoi(v)
		if err != nil || n < 0 {
			return a, p, fmt.Errorf("--depth %q: want a number of levels, 0 for all", v)
		}
		a.opts.Depth = n
	}
	if v, ok := p.values["min-pct"]; ok {
		pct, err := strconv.ParseFloat(v, 64)
		if err != nil || pct < 0 || pct > 100 {
			return a, p, fmt.Errorf("--min-pct %q: want a percentage from 0 to 100", v)
		}
		a.opts.MinPct = pct
	}
	switch a.format = p.value("format", a.format); a.format {
	case crossview.FormatTree, crossview.FormatFolded, crossview.FormatHTML:
	default:
		return a, p, fmt.Errorf("--format %q: want tree, folded or html", a.format)
	}
	if a.view = p.value("view", a.view); a.view != "gpu" && a.view != "cpu" {
		return a, p, fmt.Errorf("--view %q: want gpu or cpu", a.view)
	}
	return a, p, nil
}

func runCrossview(args []string, stdout, stderr io.Writer) error {
	a, p, err := parseCrossviewArgs(args)
	if err != nil {
		return err
	}
	f, paths, err := p.filter("crossview")
	if err != nil {
		return err
	}
	if len(paths) == 0 && a.load.db == "" {
		return fmt.Errorf("no trace given, and no --db FILE: usage: tracebook %s", commands["crossview"].usage)
	}
	ctx, db, err := openTraces(context.Background(), a.load, paths, forAnalysis, stderr)
	if err != nil {
		return err
	}
	defer db.Close()
	if _, err := db.load(ctx, paths, trace.LoadOptions{}); err != nil {
		return err
	}
	done := db.stage("analysing: cross-view")
	res, err := pipeline.CrossView(ctx, db, f, a.opts)
	done()
	if err != nil {
		return err
	}
	return crossview.Write(stdout, res, a.format, a.view)
}
