package table

import (
	"math"
	"slices"
	"strconv"
	"strings"
)

// The units a preset header gives its columns (the last word of each
// column's line in sql/*.sql), and the ones the rollup adds. Unit is
// compared without regard to case; a column without one is shown as its
// value's type says.
const (
	UnitDuration  = "DURATION_NS"  // a length of time in nanoseconds; shown in ms
	UnitTimestamp = "TIMESTAMP_NS" // nanoseconds from the trace's first event; shown in ms
	UnitCount     = "COUNT"        // a number of things; shown with grouped thousands
	UnitBytes     = "BYTES"        // shown with grouped thousands
	UnitPct       = "PCT"          // a percentage, 0..100
	UnitGBps      = "GBPS"         // gigabytes per second
	UnitHist      = "HIST"         // a log-bucket histogram ("b:n b:n ..."), not shown
)

// unitKind is what the formatters do with a unit.
type unitKind int

const (
	kindOther unitKind = iota
	kindNs             // nanoseconds, shown as ms
	kindMs             // already milliseconds
	kindPct            // 0..100
	kindShare          // 0..1, shown as %
	kindCount          // grouped integer
	kindBytes          // grouped integer
	kindGBps
	kindHist
)

func kindOf(unit string) unitKind {
	switch strings.ToLower(unit) {
	case "ns", "duration_ns", "timestamp_ns":
		return kindNs
	case "ms":
		return kindMs
	case "pct", "percent":
		return kindPct
	case "share", "ratio", "fraction":
		return kindShare
	case "count":
		return kindCount
	case "bytes":
		return kindBytes
	case "gbps":
		return kindGBps
	case "hist":
		return kindHist
	}
	return kindOther
}

// IsHist reports whether unit is the histogram unit (columns the readers
// never see).
func IsHist(unit string) bool { return kindOf(unit) == kindHist }

// IsDuration reports whether unit is a length of time in nanoseconds.
func IsDuration(unit string) bool {
	return strings.EqualFold(unit, UnitDuration) || strings.EqualFold(unit, "ns")
}

// Ms formats nanoseconds as milliseconds with three decimals (microsecond
// resolution) and grouped thousands: "0.042 ms", "12.345 ms",
// "1,234.568 ms". Tables, the report's prose, the diff and the cross-view
// write durations with it. The findings' sentences round to the duration's
// magnitude instead (ProseMs, ProseUs), and a --window label echoes the
// option's syntax (WindowMs); those are the only other ways tracebook
// writes a duration.
func Ms[T int64 | float64](ns T) string { return MsNumber(ns) + " ms" }

// MsNumber is Ms without the unit, for a cell under a header that names it.
func MsNumber[T int64 | float64](ns T) string { return Decimal(float64(ns)/1e6, 3) }

// Window names a time window in words, its bounds from the trace's first
// event: "window 1.000 ms .. 2.500 ms"; an end of 0 is open ("window
// 1.000 ms .. end"). Every scope line (report, findings, cross-view) names a
// window this way.
func Window(startNs, endNs int64) string {
	end := "end"
	if endNs > 0 {
		end = Ms(endNs)
	}
	return "window " + Ms(startNs) + " .. " + end
}

// ProseMs formats nanoseconds as milliseconds rounded to their magnitude,
// for a sentence: whole milliseconds from 100 ms ("250 ms", "1234 ms": no
// grouping), one decimal from 1 ms ("12.3 ms"), three below ("0.042 ms").
// The findings' observations and fixes write durations with it.
func ProseMs(ns int64) string {
	v := float64(ns) / 1e6
	switch {
	case v >= 100:
		return strconv.FormatFloat(v, 'f', 0, 64) + " ms"
	case v >= 1:
		return strconv.FormatFloat(v, 'f', 1, 64) + " ms"
	default:
		return strconv.FormatFloat(v, 'f', 3, 64) + " ms"
	}
}

// ProseUs is ProseMs for durations a sentence gives in microseconds below
// a millisecond, with one decimal: "12.5 us"; from 1 ms on it is ProseMs.
func ProseUs(ns int64) string {
	if ns >= 1_000_000 {
		return ProseMs(ns)
	}
	return strconv.FormatFloat(float64(ns)/1e3, 'f', 1, 64) + " µs"
}

// WindowMs formats one end of a window as the --window option takes it:
// milliseconds with up to six decimals (nanosecond resolution), trailing
// zeros dropped and no space before the unit ("1.5ms", "20ms"); 0, an open
// end, is "". A trace loaded with --window is labelled with it
// ("window 1.5ms..20ms", internal/duck).
func WindowMs(ns int64) string {
	if ns == 0 {
		return ""
	}
	return strings.TrimRight(strings.TrimRight(strconv.FormatFloat(float64(ns)/1e6, 'f', 6, 64), "0"), ".") + "ms"
}

// Runs writes integers (ranks, steps, streams) once each, in ascending
// order, a run of consecutive ones as its ends: "0–7", "0, 2, 4–6". Past
// max items (0: no limit) the rest are counted: "0, 2, … (5 more)".
func Runs(vs []int, max int) string {
	vs = slices.Clone(vs)
	slices.Sort(vs)
	vs = slices.Compact(vs)
	var items []string
	for i := 0; i < len(vs); {
		j := i
		for j+1 < len(vs) && vs[j+1] == vs[j]+1 {
			j++
		}
		item := strconv.Itoa(vs[i])
		if j > i {
			item += "–" + strconv.Itoa(vs[j])
		}
		items = append(items, item)
		i = j + 1
	}
	if max > 0 && len(items) > max {
		return strings.Join(items[:max], ", ") + ", … (" + strconv.Itoa(len(items)-max) + " more)"
	}
	return strings.Join(items, ", ")
}

// Pct formats a share 0..1 as a percentage with one decimal: "12.3%".
func Pct(share float64) string { return Decimal(share*100, 1) + "%" }

// SignedPct formats a difference 0..1 as a percentage with its sign:
// "+12.3%", "-0.4%".
func SignedPct(share float64) string {
	if share > 0 {
		return "+" + Pct(share)
	}
	return Pct(share)
}

// Int formats an integer with grouped thousands: "1,234,567".
func Int(n int64) string {
	s := strconv.FormatInt(n, 10)
	if n < 0 {
		return "-" + group(s[1:])
	}
	return group(s)
}

// Decimal formats x with a fixed number of decimals and grouped thousands:
// Decimal(1234.5, 2) = "1,234.50". Negative zero is "0.00"; NaN and the
// infinities are "NaN", "Inf" and "-Inf".
func Decimal(x float64, decimals int) string {
	if s, ok := special(x); ok {
		return s
	}
	s := strconv.FormatFloat(x, 'f', decimals, 64)
	neg := strings.HasPrefix(s, "-")
	s = strings.TrimPrefix(s, "-")
	whole, frac, _ := strings.Cut(s, ".")
	out := group(whole)
	if frac != "" {
		out += "." + frac
	}
	if neg && strings.Trim(s, "0.") != "" {
		out = "-" + out
	}
	return out
}

// Float formats a number of no known unit: at most three decimals,
// trailing zeros dropped, for ordinary magnitudes ("0.333", "2.5", "1200"),
// and six significant digits for tiny or huge ones ("1e-09").
func Float(x float64) string {
	if s, ok := special(x); ok {
		return s
	}
	if x == 0 {
		return "0"
	}
	if a := math.Abs(x); a >= 1e-3 && a < 1e15 {
		s := strconv.FormatFloat(x, 'f', 3, 64)
		s = strings.TrimSuffix(strings.TrimRight(s, "0"), ".")
		if s == "-0" {
			s = "0"
		}
		return s
	}
	return strconv.FormatFloat(x, 'g', 6, 64)
}

func special(x float64) (string, bool) {
	switch {
	case math.IsNaN(x):
		return "NaN", true
	case math.IsInf(x, 1):
		return "Inf", true
	case math.IsInf(x, -1):
		return "-Inf", true
	}
	return "", false
}

// group puts a comma between groups of three digits of an unsigned
// decimal integer.
func group(digits string) string {
	if len(digits) <= 3 {
		return digits
	}
	var b strings.Builder
	b.Grow(len(digits) + len(digits)/3)
	for i := 0; i < len(digits); i++ {
		if i > 0 && (len(digits)-i)%3 == 0 {
			b.WriteByte(',')
		}
		b.WriteByte(digits[i])
	}
	return b.String()
}

// Number converts a numeric cell value to float64; ok is false for nil,
// bool, string and other values.
func Number(v any) (float64, bool) {
	switch x := Normalize(v).(type) {
	case int64:
		return float64(x), true
	case float64:
		return x, true
	}
	return 0, false
}

// Cell formats one cell value for a reader, in its column's unit, without
// the unit itself (Header puts it in the column's header): durations in ms
// with three decimals, percentages with one, counts and bytes with grouped
// thousands, other integers as they are (ranks, steps, ids) and other
// floats with Float. nil is "" and a bool "true" or "false"; a string is
// returned as it is. numeric says whether the value is a number (shown
// right-aligned).
func Cell(v any, unit string) (text string, numeric bool) {
	v = Normalize(v)
	switch x := v.(type) {
	case nil:
		return "", false
	case bool:
		return strconv.FormatBool(x), false
	case string:
		return x, false
	case int64:
		switch kindOf(unit) {
		case kindNs:
			return MsNumber(x), true
		case kindCount, kindBytes:
			return Int(x), true
		case kindMs, kindGBps:
			return Decimal(float64(x), unitDecimals(unit)), true
		case kindPct:
			return Decimal(float64(x), 1), true
		case kindShare:
			return Decimal(float64(x)*100, 1), true
		}
		return strconv.FormatInt(x, 10), true
	case float64:
		switch kindOf(unit) {
		case kindNs:
			return MsNumber(x), true
		case kindMs, kindGBps, kindCount, kindBytes:
			return Decimal(x, unitDecimals(unit)), true
		case kindPct:
			return Decimal(x, 1), true
		case kindShare:
			return Decimal(x*100, 1), true
		}
		return Float(x), true
	}
	return "?", false
}

// unitDecimals is how many decimals a fractional value of the unit shows.
func unitDecimals(unit string) int {
	switch kindOf(unit) {
	case kindMs:
		return 3
	case kindGBps:
		return 2
	}
	return 0
}

// Header is a column's name as a reader sees it: words apart and the unit
// the cells are shown in, from the column's Unit: "blocked (ms)" for
// blocked_ns in DURATION_NS, "share (%)" for share_pct in PCT, "rank source"
// for rank_source in TEXT. A column without a unit (a query's own column)
// keeps its name as written. The column keeps its own name for SQL and
// sorting either way.
func Header(c Column) string {
	if c.Unit == "" {
		return c.Name
	}
	name, label := c.Name, ""
	switch kindOf(c.Unit) {
	case kindNs:
		name, label = strings.TrimSuffix(name, "_ns"), "ms"
	case kindMs:
		name, label = strings.TrimSuffix(name, "_ms"), "ms"
	case kindPct:
		name, label = strings.TrimSuffix(name, "_pct"), "%"
	case kindShare:
		label = "%"
	case kindBytes:
		if name != "bytes" {
			name, label = strings.TrimSuffix(name, "_bytes"), "bytes"
		}
	case kindGBps:
		if name == "gbps" {
			name = "bandwidth"
		}
		name, label = strings.TrimSuffix(name, "_gbps"), "GB/s"
	}
	if name == "" {
		name = c.Name
	}
	name = strings.ReplaceAll(name, "_", " ")
	if label != "" {
		return name + " (" + label + ")"
	}
	return name
}

// ColumnDoc is a column's tooltip: its own name where the header reads
// otherwise, its unit (else its type) and its doc: "blocked_ns,
// DURATION_NS: Sum of call durations.", "BIGINT".
func ColumnDoc(c Column) string {
	var parts []string
	if Header(c) != c.Name {
		parts = append(parts, c.Name)
	}
	if c.Unit != "" {
		parts = append(parts, c.Unit)
	} else if c.Type != "" {
		parts = append(parts, c.Type)
	}
	s := strings.Join(parts, ", ")
	if c.Doc != "" {
		if s != "" {
			s += ": "
		}
		s += c.Doc
	}
	return s
}
