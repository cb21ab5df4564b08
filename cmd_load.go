package main

import (
	"context"
	"fmt"
	"io"
	"os"
	"os/signal"
	"path/filepath"
	"strconv"
	"strings"
	"sync"
	"time"

	"github.com/tracebook/tracebook/analysis/trace"
	"github.com/tracebook/tracebook/internal/duck"
)

func init() {
	register(command{
		name:  "load",
		usage: "load TRACE... --db FILE.duckdb [--name N] [--rank N] [--no-python] [--window START..END] [--steps A..B] [--cache DIR|-]",
		help:  "load traces into a DuckDB database file that a notebook (or duckdb) can reopen",
		run:   runLoad,
	})
}

// loadFlags are the options shared by load and query: where the database
// is, and how the traces are loaded.
type loadFlags struct {
	db    string
	cache string
	opts  trace.LoadOptions
	quiet bool
}

// parseLoadFlag consumes the load option at args[i] (with its value) into f;
// it reports whether args[i] was one, and the index of the last argument used.
func parseLoadFlag(args []string, i int, f *loadFlags) (bool, int, error) {
	arg := args[i]
	if arg == "-q" {
		f.quiet = true
		return true, i, nil
	}
	if !strings.HasPrefix(arg, "--") {
		return false, i, nil
	}
	name, value, inline := strings.Cut(strings.TrimPrefix(arg, "--"), "=")
	switch name {
	case "no-python":
		f.opts.NoPython = true
		return true, i, nil
	case "quiet", "q":
		f.quiet = true
		return true, i, nil
	case "db", "name", "rank", "window", "steps", "cache":
	default:
		return false, i, nil
	}
	if !inline {
		if i+1 >= len(args) {
			return true, i, fmt.Errorf("--%s needs a value", name)
		}
		i++
		value = args[i]
	}
	switch name {
	case "db":
		f.db = value
	case "cache":
		f.cache = value
	case "name":
		f.opts.Name = value
	case "rank":
		n, err := strconv.Atoi(value)
		if err != nil || n < 0 {
			return true, i, fmt.Errorf("--rank %q: want a rank number", value)
		}
		f.opts.Rank, f.opts.HasRank = n, true
	case "window":
		lo, hi, err := parseRange(value, func(s string) (int64, error) {
			ms, err := strconv.ParseFloat(strings.TrimSuffix(s, "ms"), 64)
			return int64(ms * 1e6), err
		})
		if err != nil || hi <= lo {
			return true, i, fmt.Errorf("--window %q: want START..END in milliseconds from the trace's start, END > START", value)
		}
		f.opts.WindowStartNs, f.opts.WindowEndNs = lo, hi
	case "steps":
		lo, hi, err := parseRange(value, func(s string) (int64, error) { return strconv.ParseInt(s, 10, 32) })
		if err != nil || hi < lo {
			return true, i, fmt.Errorf("--steps %q: want A..B, step numbers with B >= A", value)
		}
		f.opts.FirstStep, f.opts.LastStep = int(lo), int(hi)
	}
	return true, i, nil
}

// parseRange parses "A..B" (a single A means A..A).
func parseRange(s string, num func(string) (int64, error)) (int64, int64, error) {
	a, b, ok := strings.Cut(s, "..")
	if !ok {
		b = a
	}
	lo, err := num(strings.TrimSpace(a))
	if err != nil {
		return 0, 0, err
	}
	hi, err := num(strings.TrimSpace(b))
	return lo, hi, err
}

func runLoad(args []string, stdout, stderr io.Writer) error {
	var f loadFlags
	var paths []string
	for i := 0; i < len(args); i++ {
		if args[i] == "-h" || args[i] == "--help" {
			return fmt.Errorf("usage: tracebook %s", commands["load"].usage)
		}
		ok, j, err := parseLoadFlag(args, i, &f)
		if err != nil {
			return err
		}
		if !ok {
			if strings.HasPrefix(args[i], "-") {
				return fmt.Errorf("unknown option %s (usage: tracebook %s)", args[i], commands["load"].usage)
			}
			paths = append(paths, args[i])
		}
		i = j
	}
	if f.db == "" {
		return fmt.Errorf("--db FILE.duckdb is required (usage: tracebook %s)", commands["load"].usage)
	}
	if len(paths) == 0 {
		return fmt.Errorf("no trace given (usage: tracebook %s)", commands["load"].usage)
	}
	ctx, stop := signal.NotifyContext(context.Background(), os.Interrupt)
	defer stop()
	db, err := duck.Open(f.db, duck.Options{CacheDir: f.cache})
	if err != nil {
		return err
	}
	defer db.Close()
	res, err := loadWithProgress(ctx, db, paths, f, stderr)
	if err != nil {
		return err
	}
	fmt.Fprintf(stdout, "%s: %d events, %d file(s), ranks %v%s -> %s\n", res.Trace, res.Events, res.Files, res.Ranks, cachedNote(res), f.db)
	for _, g := range res.Gaps {
		fmt.Fprintf(stderr, "note: %s\n", g)
	}
	if len(res.OtherSessions) > 0 {
		fmt.Fprintf(stderr, "note: loaded session %s; the folder also holds %s (load them by path)\n", res.Session, strings.Join(res.OtherSessions, ", "))
	}
	return nil
}

func cachedNote(res *trace.LoadResult) string {
	if res.Cached {
		return " (from the parse cache)"
	}
	return ""
}

// loadWithProgress loads paths, printing a progress line on stderr that
// updates in place once the load has taken more than a second.
func loadWithProgress(ctx context.Context, db *duck.DB, paths []string, f loadFlags, stderr io.Writer) (*trace.LoadResult, error) {
	p := &progressLine{w: stderr, start: time.Now(), quiet: f.quiet}
	res, err := db.Load(ctx, paths, f.opts, p.update)
	p.finish()
	return res, err
}

// progressLine prints `file  MB read  MB/s  events` on one updating line.
type progressLine struct {
	w       io.Writer
	start   time.Time
	quiet   bool
	mu      sync.Mutex
	last    time.Time
	shown   bool
	width   int
	jsonMB  float64 // JSON bytes of the files already finished
	current trace.Progress
}

func (p *progressLine) update(pr trace.Progress) {
	if p.quiet {
		return
	}
	p.mu.Lock()
	defer p.mu.Unlock()
	now := time.Now()
	if pr.FileIndex != p.current.FileIndex && p.current.File != "" {
		p.jsonMB += float64(p.current.BytesRead) / 1e6
	}
	p.current = pr
	if now.Sub(p.start) < time.Second || now.Sub(p.last) < 200*time.Millisecond {
		return
	}
	p.last = now
	total := p.jsonMB + float64(pr.BytesRead)/1e6
	rate := total / now.Sub(p.start).Seconds()
	pct := ""
	if pr.BytesTotal > 0 {
		pct = fmt.Sprintf(" (%d%% of the file)", min(100, pr.DiskRead*100/pr.BytesTotal))
	}
	line := fmt.Sprintf("%s [%d/%d]  %.1f MB read%s  %.0f MB/s  %d events", filepath.Base(pr.File), pr.FileIndex+1, pr.Files, float64(pr.BytesRead)/1e6, pct, rate, pr.Events)
	pad := ""
	if n := p.width - len(line); n > 0 {
		pad = strings.Repeat(" ", n)
	}
	p.width = len(line)
	fmt.Fprintf(p.w, "\r%s%s", line, pad)
	p.shown = true
}

func (p *progressLine) finish() {
	p.mu.Lock()
	defer p.mu.Unlock()
	if p.shown {
		fmt.Fprintf(p.w, "\r%s\r", strings.Repeat(" ", p.width))
	}
}
