package cli

import (
	"bytes"
	"compress/gzip"
	"context"
	"encoding/base64"
	"errors"
	"fmt"
	"io"
	"strings"

	"github.com/tracebook/tracebook/analysis/crossview"
	"github.com/tracebook/tracebook/analysis/report"
	"github.com/tracebook/tracebook/cells"
	"github.com/tracebook/tracebook/internal/duck"
	"github.com/tracebook/tracebook/kernel"
	"github.com/tracebook/tracebook/pipeline"
)

// sessionConfig is what differs between the sessions that the kernel and
// `tracebook run` build; the zero value is the kernel's.
type sessionConfig struct {
	// workDir is where relative paths in magics start ("" = the process's).
	workDir string
	// cacheDir is the parse cache (duck.Options.CacheDir: "" = the user
	// cache directory, "-" = none).
	cacheDir string
	// deterministic leaves timings and parse-cache use out of the outputs
	// (cells.SessionOptions.Deterministic).
	deterministic bool
}

// sessionHooks wire the magics whose work lives outside package cells
// (%evidence, %crossview, %report, %diff) into a new session. A file that
// provides one appends its wiring in an init function, so that the kernel
// and `tracebook run` get it alike.
var sessionHooks []func(s *cells.Session)

func init() {
	sessionHooks = append(sessionHooks, func(s *cells.Session) {
		s.Crossview = cells.CrossViewHook(crossview.DefaultOptions())
	})
	newExecutor = func() (kernel.Executor, error) {
		s, db, err := newSession(sessionConfig{})
		if err != nil {
			return nil, err
		}
		return &sessionExecutor{s: s, db: db}, nil
	}
}

// newSession opens a scratch DuckDB database (a file in a temporary
// directory that Close removes, with fileMemoryLimit: a notebook loads
// trace after trace, and the file keeps them compressed instead of holding
// them all in memory) and returns the notebook session over it, with every
// magic wired. The caller closes the database after the session's last
// cell.
func newSession(cfg sessionConfig) (*cells.Session, *duck.DB, error) {
	db, err := duck.Open("", duck.Options{CacheDir: cfg.cacheDir, Scratch: true, MemoryLimit: fileMemoryLimit})
	if err != nil {
		return nil, nil, fmt.Errorf("open the database: %w", err)
	}
	s := cells.NewSession(db, cells.SessionOptions{WorkDir: cfg.workDir, Deterministic: cfg.deterministic})
	for _, h := range sessionHooks {
		h(s)
	}
	if s.Report != nil {
		s.Report = withReportSource(s.Report)
	}
	return s, db, nil
}

// mimeReportSource is the MIME type of what a report is made of (the
// evidence Bundle and the cross-views): report.EncodeSource's msgpack,
// gzipped, as base64 text. %report adds it to its output so that
// `tracebook report --from NOTEBOOK.ipynb` rebuilds the offline report from
// a saved notebook. Front ends have no renderer for it and show the
// Markdown beside it.
const mimeReportSource = "application/vnd.tracebook.report+gzip"

// encodeReportSource is the value of mimeReportSource for a report's
// encoded source; the same source gives the same text.
func encodeReportSource(data []byte) (string, error) {
	var b bytes.Buffer
	zw, err := gzip.NewWriterLevel(&b, gzip.BestCompression)
	if err != nil {
		return "", err
	}
	if _, err := zw.Write(data); err != nil {
		return "", err
	}
	if err := zw.Close(); err != nil {
		return "", err
	}
	return base64.StdEncoding.EncodeToString(b.Bytes()), nil
}

// decodeReportSource reverses encodeReportSource.
func decodeReportSource(text string) ([]byte, error) {
	z, err := base64.StdEncoding.DecodeString(strings.Join(strings.Fields(text), ""))
	if err != nil {
		return nil, err
	}
	zr, err := gzip.NewReader(bytes.NewReader(z))
	if err != nil {
		return nil, err
	}
	return io.ReadAll(zr)
}

// withReportSource adds mimeReportSource to what the %report hook shows
// when the hook does not add it itself, collecting the source again under
// the same filter.
func withReportSource(h cells.Hook) cells.Hook {
	return func(ctx context.Context, s *cells.Session, args []string, pub cells.Publisher) (*cells.Result, error) {
		res, err := h(ctx, s, args, pub)
		if err != nil || res == nil || res.Data[mimeReportSource] != nil {
			return res, err
		}
		f, _, err := cells.ParseFilter(args)
		if err != nil {
			return res, nil
		}
		src, err := pipeline.CollectReport(ctx, s.Engine(), f, s.Context())
		if err != nil {
			return res, nil
		}
		b, err := report.EncodeSource(src)
		if err != nil {
			return res, nil
		}
		text, err := encodeReportSource(b)
		if err != nil {
			return res, nil
		}
		res.Data[mimeReportSource] = text
		return res, nil
	}
}

// sessionExecutor is a session as the kernel's Executor: the publisher
// passes through (the two interfaces have the same methods), results and
// errors are copied into the kernel's types.
type sessionExecutor struct {
	s  *cells.Session
	db *duck.DB
}

func (e *sessionExecutor) Execute(ctx context.Context, code string, pub kernel.Publisher) (*kernel.Result, error) {
	res, err := e.s.Execute(ctx, code, pub)
	if err != nil {
		var ee *cells.ExecError
		if errors.As(err, &ee) {
			return nil, &kernel.ExecError{EName: ee.EName, EValue: ee.EValue, Traceback: ee.Traceback}
		}
		return nil, err
	}
	if res == nil {
		return nil, nil
	}
	return &kernel.Result{Data: res.Data, Metadata: res.Metadata}, nil
}

func (e *sessionExecutor) Complete(code string, cursor int) ([]string, int, int) {
	return e.s.Complete(code, cursor)
}

func (e *sessionExecutor) Inspect(code string, cursor, detailLevel int) (map[string]any, bool) {
	return e.s.Inspect(code, cursor, detailLevel)
}

func (e *sessionExecutor) IsComplete(code string) (string, string) { return e.s.IsComplete(code) }

// InterruptIdle cancels the session's background load: an interrupt with
// no cell running.
func (e *sessionExecutor) InterruptIdle() { e.s.Interrupt() }

// Shutdown ends the session; without a restart it also closes the database.
func (e *sessionExecutor) Shutdown(restart bool) error {
	err := e.s.Shutdown(restart)
	if !restart {
		err = errors.Join(err, e.db.Close())
	}
	return err
}
