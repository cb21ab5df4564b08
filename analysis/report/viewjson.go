package report

import (
	"errors"
	"math"
	"strconv"

	"github.com/tracebook/tracebook/analysis/evidence"
	"github.com/tracebook/tracebook/analysis/internal/jsonstr"
)

// The viewer module parses the view with this small JSON reader instead of
// encoding/json, which would add about 100 kB (gzip) to the module of every
// report. It reads standard JSON (RFC 8259) into nil, bool, float64,
// string, []any and map[string]any.

type jsonReader struct {
	s   []byte
	pos int
}

func (r *jsonReader) fail() error {
	return errors.New("parsing the view: malformed JSON at byte " + strconv.Itoa(r.pos))
}

func (r *jsonReader) ws() {
	for r.pos < len(r.s) {
		switch r.s[r.pos] {
		case ' ', '\t', '\n', '\r':
			r.pos++
		default:
			return
		}
	}
}

func (r *jsonReader) value(depth int) (any, error) {
	if depth > 64 {
		return nil, r.fail()
	}
	r.ws()
	if r.pos >= len(r.s) {
		return nil, r.fail()
	}
	switch c := r.s[r.pos]; {
	case c == '{':
		r.pos++
		m := map[string]any{}
		r.ws()
		if r.pos < len(r.s) && r.s[r.pos] == '}' {
			r.pos++
			return m, nil
		}
		for {
			r.ws()
			if r.pos >= len(r.s) || r.s[r.pos] != '"' {
				return nil, r.fail()
			}
			k, err := r.str()
			if err != nil {
				return nil, err
			}
			r.ws()
			if r.pos >= len(r.s) || r.s[r.pos] != ':' {
				return nil, r.fail()
			}
			r.pos++
			v, err := r.value(depth + 1)
			if err != nil {
				return nil, err
			}
			m[k] = v
			r.ws()
			if r.pos < len(r.s) && r.s[r.pos] == ',' {
				r.pos++
				continue
			}
			if r.pos < len(r.s) && r.s[r.pos] == '}' {
				r.pos++
				return m, nil
			}
			return nil, r.fail()
		}
	case c == '[':
		r.pos++
		a := []any{}
		r.ws()
		if r.pos < len(r.s) && r.s[r.pos] == ']' {
			r.pos++
			return a, nil
		}
		for {
			v, err := r.value(depth + 1)
			if err != nil {
				return nil, err
			}
			a = append(a, v)
			r.ws()
			if r.pos < len(r.s) && r.s[r.pos] == ',' {
				r.pos++
				continue
			}
			if r.pos < len(r.s) && r.s[r.pos] == ']' {
				r.pos++
				return a, nil
			}
			return nil, r.fail()
		}
	case c == '"':
		return r.str()
	case c == 't' || c == 'f' || c == 'n':
		for _, lit := range []struct {
			text string
			v    any
		}{{"true", true}, {"false", false}, {"null", nil}} {
			if len(r.s)-r.pos >= len(lit.text) && string(r.s[r.pos:r.pos+len(lit.text)]) == lit.text {
				r.pos += len(lit.text)
				return lit.v, nil
			}
		}
		return nil, r.fail()
	default:
		start := r.pos
		for r.pos < len(r.s) && (r.s[r.pos] == '-' || r.s[r.pos] == '+' || r.s[r.pos] == '.' ||
			r.s[r.pos] == 'e' || r.s[r.pos] == 'E' || (r.s[r.pos] >= '0' && r.s[r.pos] <= '9')) {
			r.pos++
		}
		f, err := strconv.ParseFloat(string(r.s[start:r.pos]), 64)
		if err != nil || start == r.pos {
			r.pos = start
			return nil, r.fail()
		}
		return f, nil
	}
}

// str reads the string at r.pos (a '"'): RFC 8259 strictly, so a raw
// control character is an error, and invalid UTF-8 becomes U+FFFD, as
// encoding/json does.
func (r *jsonReader) str() (string, error) {
	out, n, st := jsonstr.Append(nil, r.s[r.pos+1:], jsonstr.Strict)
	r.pos += 1 + n
	if st != jsonstr.OK {
		if st == jsonstr.BadEscape {
			r.pos++ // the error names the byte after the escape's letter
		}
		return "", r.fail()
	}
	return string(out), nil
}

// parseJSON reads one JSON document.
func parseJSON(data []byte) (any, error) {
	r := &jsonReader{s: data}
	v, err := r.value(0)
	if err != nil {
		return nil, err
	}
	r.ws()
	if r.pos != len(r.s) {
		return nil, r.fail()
	}
	return v, nil
}

// viewFrom maps a parsed JSON object onto a View; fields of the wrong type
// are errors, unknown fields are ignored (as encoding/json does).
func viewFrom(doc any) (View, error) {
	var v View
	m, ok := doc.(map[string]any)
	if !ok {
		return v, errors.New("parsing the view: want a JSON object")
	}
	bad := func(field string) error {
		return errors.New("parsing the view: field " + strconv.Quote(field) + " has the wrong type")
	}
	if fv, ok := m["filter"]; ok && fv != nil {
		fm, ok := fv.(map[string]any)
		if !ok {
			return v, bad("filter")
		}
		f := evidence.Filter{}
		var err error
		get := func(name string, dst any) {
			x, ok := fm[name]
			if !ok || x == nil || err != nil {
				return
			}
			switch d := dst.(type) {
			case *string:
				s, ok := x.(string)
				if !ok {
					err = bad("filter." + name)
				}
				*d = s
			case *bool:
				b, ok := x.(bool)
				if !ok {
					err = bad("filter." + name)
				}
				*d = b
			case *int:
				n, ok := x.(float64)
				if !ok || n != math.Trunc(n) {
					err = bad("filter." + name)
				}
				*d = int(n)
			case *int64:
				n, ok := x.(float64)
				if !ok || n != math.Trunc(n) {
					err = bad("filter." + name)
				}
				*d = int64(n)
			}
		}
		get("trace", &f.Trace)
		get("rank", &f.Rank)
		get("has_rank", &f.HasRank)
		get("window_start_ns", &f.WindowStartNs)
		get("window_end_ns", &f.WindowEndNs)
		get("phase", &f.Phase)
		get("step", &f.Step)
		get("has_step", &f.HasStep)
		get("stream", &f.Stream)
		get("has_stream", &f.HasStream)
		if err != nil {
			return v, err
		}
		v.Filter = f
	}
	if tv, ok := m["thresholds"]; ok && tv != nil {
		tm, ok := tv.(map[string]any)
		if !ok {
			return v, bad("thresholds")
		}
		v.Thresholds = map[string]float64{}
		for k, x := range tm {
			n, ok := x.(float64)
			if !ok {
				return v, bad("thresholds." + k)
			}
			v.Thresholds[k] = n
		}
	}
	if sv, ok := m["sort"]; ok && sv != nil {
		sm, ok := sv.(map[string]any)
		if !ok {
			return v, bad("sort")
		}
		v.Sort = map[string]string{}
		for k, x := range sm {
			s, ok := x.(string)
			if !ok {
				return v, bad("sort." + k)
			}
			v.Sort[k] = s
		}
	}
	if ov, ok := m["open"]; ok && ov != nil {
		oa, ok := ov.([]any)
		if !ok {
			return v, bad("open")
		}
		v.Open = make([]string, 0, len(oa))
		for _, x := range oa {
			s, ok := x.(string)
			if !ok {
				return v, bad("open")
			}
			v.Open = append(v.Open, s)
		}
	}
	if mv, ok := m["max_rows"]; ok && mv != nil {
		n, ok := mv.(float64)
		if !ok || n != math.Trunc(n) {
			return v, bad("max_rows")
		}
		v.MaxRows = int(n)
	}
	return v, nil
}
