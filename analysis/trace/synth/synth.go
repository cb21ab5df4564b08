// Package synth makes large synthetic Kineto traces out of real ones, for
// benchmarks and load tests: Scale repeats a trace's events N times, each
// copy shifted in time after the previous one, with the ids that link
// events renumbered so that each copy links only to itself.
//
// It leaves parsing to package trace (which it uses to read the source) and
// the command line to the CLI.
package synth

import (
	"bufio"
	"bytes"
	"errors"
	"fmt"
	"io"
	"strconv"

	"github.com/tracebook/tracebook/analysis/trace"
)

// copyGapNs separates one copy's last event from the next copy's first.
const copyGapNs = 1000

// Scale writes to dst a valid Kineto trace (the object form, uncompressed)
// holding n copies of the trace read from src (JSON or gzip-compressed
// JSON). Copy k is shifted by k × (span + 1 µs), where span runs from the
// source's first ts to its last end; its correlation, External id, Python
// id, Python parent id and flow ids are shifted by k × (largest such id +
// 1), except ids ≤ 0 of correlation and External id, which mean "no link"
// and stay as they are. Metadata events (process and thread names) and the
// top-level keys are written once. Keys of events outside the importer's
// model (tts, cname, ...) are not copied.
//
// # Notes
//
// The source is held in memory (decompressed) while the copies are written;
// the output is streamed.
func Scale(src io.Reader, dst io.Writer, n int) error {
	if n < 1 {
		return fmt.Errorf("synth: copies must be at least 1, got %d", n)
	}
	raw, err := io.ReadAll(src)
	if err != nil {
		return fmt.Errorf("synth: reading the source: %w", err)
	}
	var maxID int64
	fi, err := trace.Parse(bytes.NewReader(raw), "source", trace.LoadOptions{}, func(e *trace.Event) error {
		for _, id := range []struct {
			v   int64
			has trace.Field
		}{{e.Correlation, trace.HasCorrelation}, {e.ExternalID, trace.HasExternalID}, {e.PythonID, trace.HasPythonID},
			{e.PythonParentID, trace.HasPythonParentID}, {e.FlowID, trace.HasFlowID}} {
			if e.Has&id.has != 0 && id.v > maxID {
				maxID = id.v
			}
		}
		return nil
	})
	if err != nil {
		return fmt.Errorf("synth: %w", err)
	}
	if maxID > (1<<62)/int64(n) {
		return fmt.Errorf("synth: ids up to %d leave no room for %d copies", maxID, n)
	}
	idStride := maxID + 1
	timeStride := fi.LastEndNs - fi.FirstTsNs + copyGapNs

	w := bufio.NewWriterSize(dst, 1<<20)
	meta := bytes.TrimSpace(fi.Metadata)
	w.WriteString("{")
	if len(meta) > 2 {
		w.Write(meta[1 : len(meta)-1])
		w.WriteString(",")
	}
	w.WriteString("\n\"traceEvents\":[\n")
	first := true
	sep := func() {
		if !first {
			w.WriteString(",\n")
		}
		first = false
	}
	var buf []byte
	for _, p := range fi.Processes {
		for _, m := range []struct {
			name, key, val string
			ok             bool
		}{{"process_name", "name", string(trace.AppendJSONString(nil, p.Name)), p.Name != ""}, {"process_labels", "labels", string(trace.AppendJSONString(nil, p.Labels)), p.Labels != ""},
			{"process_sort_index", "sort_index", strconv.FormatInt(p.SortIndex, 10), p.HasSortIndex}} {
			if m.ok {
				sep()
				buf = appendMeta(buf[:0], m.name, p.Pid, "0", m.key, m.val)
				w.Write(buf)
			}
		}
	}
	for _, t := range fi.Threads {
		if t.Name != "" {
			sep()
			w.Write(appendMeta(buf[:0], "thread_name", t.Pid, t.Tid, "name", string(trace.AppendJSONString(nil, t.Name))))
		}
		if t.HasSortIndex {
			sep()
			w.Write(appendMeta(buf[:0], "thread_sort_index", t.Pid, t.Tid, "sort_index", strconv.FormatInt(t.SortIndex, 10)))
		}
	}
	for k := 0; k < n; k++ {
		dt, did := int64(k)*timeStride, int64(k)*idStride
		_, err := trace.Parse(bytes.NewReader(raw), "source", trace.LoadOptions{}, func(e *trace.Event) error {
			sep()
			buf = appendEvent(buf[:0], e, dt, did)
			_, err := w.Write(buf)
			return err
		})
		if err != nil {
			var pe *trace.ParseError
			if errors.As(err, &pe) {
				return fmt.Errorf("synth: %w", err)
			}
			return fmt.Errorf("synth: writing copy %d: %w", k, err)
		}
	}
	w.WriteString("\n]}\n")
	if err := w.Flush(); err != nil {
		return fmt.Errorf("synth: writing: %w", err)
	}
	return nil
}

func appendMeta(b []byte, name, pid, tid, key, val string) []byte {
	b = append(b, `{"ph":"M","name":"`...)
	b = append(b, name...)
	b = append(b, `","pid":`...)
	b = appendID(b, pid)
	b = append(b, `,"tid":`...)
	b = appendID(b, tid)
	b = append(b, `,"ts":0,"args":{"`...)
	b = append(b, key...)
	b = append(b, `":`...)
	b = append(b, val...)
	return append(b, "}}"...)
}

// appendID writes a pid or tid: as a number when it is one, else as a string.
func appendID(b []byte, id string) []byte {
	if _, err := strconv.ParseInt(id, 10, 64); err == nil {
		return append(b, id...)
	}
	if _, err := strconv.ParseFloat(id, 64); err == nil && id != "" && id[0] != '+' && id != "NaN" {
		return append(b, id...)
	}
	return trace.AppendJSONString(b, id)
}

// appendTime writes ns as microseconds with three decimals (exact).
func appendTime(b []byte, ns int64) []byte {
	if ns < 0 {
		b = append(b, '-')
		ns = -ns
	}
	b = strconv.AppendInt(b, ns/1000, 10)
	if f := ns % 1000; f != 0 {
		b = append(b, '.')
		b = append(b, byte('0'+f/100), byte('0'+f/10%10), byte('0'+f%10))
	}
	return b
}

func appendEvent(b []byte, e *trace.Event, dt, did int64) []byte {
	b = append(b, `{"ph":`...)
	b = trace.AppendJSONString(b, e.Ph)
	if e.Cat != "" {
		b = append(b, `,"cat":`...)
		b = trace.AppendJSONString(b, e.Cat)
	}
	b = append(b, `,"name":`...)
	b = trace.AppendJSONString(b, e.Name)
	if e.Pid != "" {
		b = append(b, `,"pid":`...)
		b = appendID(b, e.Pid)
	}
	if e.Tid != "" {
		b = append(b, `,"tid":`...)
		b = appendID(b, e.Tid)
	}
	if e.Has&trace.HasTs != 0 {
		b = append(b, `,"ts":`...)
		b = appendTime(b, e.TsNs+dt)
	}
	if e.Has&trace.HasDur != 0 {
		b = append(b, `,"dur":`...)
		b = appendTime(b, e.DurNs)
	}
	if e.Has&trace.HasFlowID != 0 {
		b = append(b, `,"id":`...)
		b = strconv.AppendInt(b, e.FlowID+did, 10)
	}
	if e.BP != "" {
		b = append(b, `,"bp":`...)
		b = trace.AppendJSONString(b, e.BP)
	}
	if e.Scope != "" {
		b = append(b, `,"s":`...)
		b = trace.AppendJSONString(b, e.Scope)
	}
	start := len(b)
	b = append(b, `,"args":{`...)
	argStart := len(b)
	link := func(v int64) int64 {
		if v <= 0 {
			return v
		}
		return v + did
	}
	ints := []struct {
		key string
		has trace.Field
		v   int64
	}{
		{"correlation", trace.HasCorrelation, link(e.Correlation)},
		{"External id", trace.HasExternalID, link(e.ExternalID)},
		{"Python id", trace.HasPythonID, e.PythonID + did},
		{"Python parent id", trace.HasPythonParentID, e.PythonParentID + did},
		{"Ev Idx", trace.HasEvIdx, e.EvIdx},
		{"Sequence number", trace.HasSeqNo, e.SeqNo},
		{"Fwd thread id", trace.HasFwdTid, e.FwdTid},
		{"stream", trace.HasStream, e.Stream},
		{"device", trace.HasDevice, e.Device},
		{"bytes", trace.HasBytes, e.Bytes},
		{"graph id", trace.HasGraphID, e.GraphID},
	}
	comma := func() {
		if len(b) > argStart {
			b = append(b, ',')
		}
	}
	for _, f := range ints {
		if e.Has&f.has != 0 {
			comma()
			b = append(b, '"')
			b = append(b, f.key...)
			b = append(b, `":`...)
			b = strconv.AppendInt(b, f.v, 10)
		}
	}
	if e.Has&trace.HasMemBW != 0 {
		comma()
		b = append(b, `"memory bandwidth (GB/s)":`...)
		b = strconv.AppendFloat(b, e.MemBWGBps, 'g', -1, 64)
	}
	if e.Has&trace.HasGrid != 0 {
		comma()
		b = append(b, `"grid":`...)
		b = append(b, e.Grid...)
	}
	if e.Has&trace.HasBlock != 0 {
		comma()
		b = append(b, `"block":`...)
		b = append(b, e.Block...)
	}
	if len(e.Args) > 2 {
		comma()
		b = append(b, e.Args[1:len(e.Args)-1]...)
	}
	if len(b) == argStart {
		b = b[:start]
	} else {
		b = append(b, '}')
	}
	return append(b, '}')
}
