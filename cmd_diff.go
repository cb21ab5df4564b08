package main

import (
	"bytes"
	"context"
	"errors"
	"fmt"
	"io"
	"os"
	"os/signal"
	"strings"

	"github.com/tracebook/tracebook/analysis/diff"
	"github.com/tracebook/tracebook/analysis/evidence"
	"github.com/tracebook/tracebook/analysis/trace"
	"github.com/tracebook/tracebook/cells"
	"github.com/tracebook/tracebook/internal/duck"
)

func init() {
	register(command{
		name:  "diff",
		usage: "diff BASE TEST [-o diff.html] [--md diff.md] [--base-context K=V,...] [--test-context K=V,...] [filter]",
		help:  "did the fix work? compare two traces of the same workload, step-normalised (Markdown on stdout without -o/--md)",
		run:   runDiff,
	})
	sessionHooks = append(sessionHooks, func(s *cells.Session) {
		s.Diff = cells.DiffHook
	})
}

func runDiff(args []string, stdout, stderr io.Writer) error {
	usage := fmt.Errorf("usage: tracebook %s", commands["diff"].usage)
	var out, mdPath, baseSpec, testSpec string
	var rest []string
	for i := 0; i < len(args); i++ {
		arg := args[i]
		if arg == "-h" || arg == "--help" {
			return usage
		}
		name, value, inline := strings.Cut(strings.TrimLeft(arg, "-"), "=")
		if !strings.HasPrefix(arg, "-") || (name != "o" && name != "out" && name != "md" && name != "base-context" && name != "test-context") {
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
		default:
			out = value
		}
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
	d, err := collectDiff(ctx, paths[0], paths[1], f, baseCtx, testCtx)
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
		var page bytes.Buffer
		if err := diff.WritePage(&page, d); err != nil {
			return err
		}
		if err := os.WriteFile(out, page.Bytes(), 0o644); err != nil {
			return err
		}
		fmt.Fprintf(stdout, "wrote %s (%d bytes)\n", out, page.Len())
	}
	return nil
}

// collectDiff loads the two traces into an in-memory database (the test
// under another name when both paths derive the same one) and compares them
// through the notebook's code, each side with its %context values.
func collectDiff(ctx context.Context, base, test string, f evidence.Filter, baseCtx, testCtx map[string]string) (*diff.Diff, error) {
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
	return cells.CollectDiff(ctx, db, b.Trace, t.Trace, f, baseCtx, testCtx)
}
