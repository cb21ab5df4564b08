package cells

import (
	"bytes"
	"context"
	"fmt"
	"io"
	"os"
	"strconv"
	"strings"

	"github.com/tracebook/tracebook/analysis/diff"
	"github.com/tracebook/tracebook/analysis/report"
	"github.com/tracebook/tracebook/pipeline"
)

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
			return nil, usagef("diff context: %s", unknownContextKey(k))
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
		in, err := pipeline.CollectDiffInput(ctx, s.Engine(), pos[0], pos[1], f, baseCtx, testCtx, htmlPath != "")
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
