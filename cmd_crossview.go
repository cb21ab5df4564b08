package main

import (
	"context"
	"fmt"
	"io"
	"strconv"
	"strings"

	"github.com/tracebook/tracebook/analysis/crossview"
	"github.com/tracebook/tracebook/analysis/trace"
	"github.com/tracebook/tracebook/cells"
)

func init() {
	register(command{
		name:  "crossview",
		usage: "crossview TRACE... [filter] [--depth N] [--min-pct P] [--format tree|folded|html] [--view gpu|cpu] [--cache DIR|-] [-q]",
		help:  "the GPU view and the CPU view of the same slice, and which side is the constraint",
		run:   runCrossview,
	})
}

// crossviewArgs are the crossview command's arguments.
type crossviewArgs struct {
	paths  []string
	opts   crossview.Options
	format string
	view   string
	load   loadFlags // --cache and -q
}

// parseCrossviewArgs takes the command's own options out of args; the
// filter (--trace --rank --window --phase --stream, as in every magic) and
// the trace paths remain. --view chooses the tree of the folded format.
func parseCrossviewArgs(args []string) (crossviewArgs, []string, error) {
	a := crossviewArgs{opts: crossview.DefaultOptions(), format: crossview.FormatTree, view: "gpu"}
	var rest []string
	for i := 0; i < len(args); i++ {
		ok, j, err := parseCacheFlag(args, i, &a.load)
		if err != nil {
			return a, nil, err
		}
		if ok {
			i = j
			continue
		}
		arg := args[i]
		name, value, inline := strings.Cut(strings.TrimPrefix(arg, "--"), "=")
		switch name {
		case "depth", "min-pct", "format", "view":
		default:
			rest = append(rest, arg)
			continue
		}
		if !strings.HasPrefix(arg, "--") {
			rest = append(rest, arg)
			continue
		}
		if !inline {
			if i+1 >= len(args) {
				return a, nil, fmt.Errorf("--%s needs a value", name)
			}
			i++
			value = args[i]
		}
		switch name {
		case "depth":
			n, err := strconv.Atoi(value)
			if err != nil || n < 0 {
				return a, nil, fmt.Errorf("--depth %q: want a number of levels, 0 for all", value)
			}
			a.opts.Depth = n
		case "min-pct":
			p, err := strconv.ParseFloat(value, 64)
			if err != nil || p < 0 || p > 100 {
				return a, nil, fmt.Errorf("--min-pct %q: want a percentage from 0 to 100", value)
			}
			a.opts.MinPct = p
		case "format":
			switch value {
			case crossview.FormatTree, crossview.FormatFolded, crossview.FormatHTML:
			default:
				return a, nil, fmt.Errorf("--format %q: want tree, folded or html", value)
			}
			a.format = value
		case "view":
			if value != "gpu" && value != "cpu" {
				return a, nil, fmt.Errorf("--view %q: want gpu or cpu", value)
			}
			a.view = value
		}
	}
	return a, rest, nil
}

func runCrossview(args []string, stdout, stderr io.Writer) error {
	a, rest, err := parseCrossviewArgs(args)
	if err != nil {
		return err
	}
	f, paths, err := cells.ParseFilter(rest)
	if err != nil {
		return err
	}
	for _, p := range paths {
		if strings.HasPrefix(p, "--") {
			return fmt.Errorf("unknown option %s", p)
		}
	}
	if len(paths) == 0 {
		return fmt.Errorf("no trace given: usage: tracebook %s", commands["crossview"].usage)
	}
	ctx, db, err := openTraces(context.Background(), a.load, stderr)
	if err != nil {
		return err
	}
	defer db.Close()
	if _, err := db.load(ctx, paths, trace.LoadOptions{}); err != nil {
		return err
	}
	res, err := cells.CrossView(ctx, db, f, a.opts)
	if err != nil {
		return err
	}
	return crossview.Write(stdout, res, a.format, a.view)
}
