package cells

import (
	"bytes"
	"context"
	"fmt"
	"os"
	"strconv"
	"strings"

	"github.com/tracebook/tracebook/analysis/crossview"
	"github.com/tracebook/tracebook/analysis/diff"
	"github.com/tracebook/tracebook/analysis/evidence"
)

// CollectDiff collects, for each of the loaded traces base and test, the
// evidence of every area and the cross-view under f (with f.Trace set to
// the trace), and compares them step-normalised (analysis/diff). The
// %context record of each side is baseContext and testContext; where they
// differ, the diff warns. A side whose cross-view cannot be built is
// compared without its tree. %diff and `tracebook diff` both call it.
func CollectDiff(ctx context.Context, eng Engine, base, test string, f evidence.Filter, baseContext, testContext map[string]string) (*diff.Diff, error) {
	var sides [2]diff.Side
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
		sides[i] = diff.Side{Name: name, Bundle: b}
		if cv, err := CrossView(ctx, eng, sf, crossview.DefaultOptions()); err == nil {
			sides[i].CrossView = cv
		}
	}
	return diff.Compare(sides[0], sides[1], f)
}

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

// DiffHook is the %diff hook: `%diff BASE TEST [filter] [--md PATH]
// [--html PATH] [--base-context K=V,...] [--test-context K=V,...]`
// compares two loaded traces and shows the diff; --md and --html also
// write it (the HTML is one offline page, no script). Both sides take the
// session's %context record; --base-context and --test-context set what
// differs between the two captures (tp=4,batch-size=32), and the diff warns
// about every key that differs.
func DiffHook(ctx context.Context, s *Session, args []string, _ Publisher) (*Result, error) {
	f, rest, err := ParseFilter(args)
	if err != nil {
		return nil, err
	}
	if f.Trace != "" {
		return nil, usagef("%%diff names its two traces as BASE TEST, not with --trace")
	}
	var pos []string
	var htmlPath, mdPath, baseSpec, testSpec string
	for i := 0; i < len(rest); i++ {
		name, value, inline := splitOption(rest[i])
		if name == "" {
			pos = append(pos, rest[i])
			continue
		}
		if name != "html" && name != "md" && name != "base-context" && name != "test-context" {
			return nil, usagef("%%diff: unexpected argument %q", rest[i])
		}
		if !inline {
			if i+1 >= len(rest) {
				return nil, usagef("--%s needs a PATH", name)
			}
			i++
			value = rest[i]
		}
		switch name {
		case "html":
			htmlPath = value
		case "md":
			mdPath = value
		case "base-context":
			baseSpec = value
		default:
			testSpec = value
		}
	}
	if len(pos) != 2 {
		return nil, usagef("%%diff takes two loaded traces, BASE TEST (%%trace list shows them), got %d", len(pos))
	}
	baseCtx, err := ParseDiffContext(s.Context(), baseSpec)
	if err != nil {
		return nil, err
	}
	testCtx, err := ParseDiffContext(s.Context(), testSpec)
	if err != nil {
		return nil, err
	}
	d, err := CollectDiff(ctx, s.Engine(), pos[0], pos[1], f, baseCtx, testCtx)
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
		var page bytes.Buffer
		if err := diff.WritePage(&page, d); err != nil {
			return nil, err
		}
		p := s.resolve(htmlPath)
		if err := os.WriteFile(p, page.Bytes(), 0o644); err != nil {
			return nil, fmt.Errorf("%%diff: writing the HTML diff: %w", err)
		}
		fmt.Fprintf(&notes, "HTML diff written to %s (%d bytes, opens offline)\n", p, page.Len())
	}
	if notes.Len() > 0 {
		res.Data[MIMEText] = notes.String() + "\n" + res.Data[MIMEText].(string)
	}
	return res, nil
}
