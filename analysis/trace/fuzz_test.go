package trace

import (
	"bytes"
	"encoding/json"
	"errors"
	"os"
	"path/filepath"
	"reflect"
	"testing"
	"unicode/utf8"

	"github.com/tracebook/tracebook/internal/testutil"
)

// fuzzSeeds are small real traces from the repository's testdata (see
// testdata/README.md for their provenance).
var fuzzSeeds = []string{
	"hta/amd_mi250_minitoy/mi250_minitoy_train_ROCm6_2_kineto.json.gz",
	"hta/event_sync_multi_stream/event_sync_trace.json.gz",
	"hta/inference_rank1_oldcats/inference_rank_1.json.gz",
	"hta/triton_example/triton_example.json.gz",
}

var sentinels = []error{ErrUnreadable, ErrTruncatedGzip, ErrBadGzip, ErrNotJSON, ErrTruncated, ErrSyntax,
	ErrNoTraceEvents, ErrBadTimestamp, ErrBadDuration, ErrAbsurdTime, ErrEventTooLarge}

// parseAll parses data and returns copies of the events.
func parseAll(data []byte) ([]Event, *FileInfo, error) {
	var evs []Event
	fi, err := Parse(bytes.NewReader(data), "fuzz.json", LoadOptions{}, func(e *Event) error {
		c := *e
		c.Args = append([]byte(nil), e.Args...)
		evs = append(evs, c)
		return nil
	})
	return evs, fi, err
}

// withTinyBuffers runs f with a 7-byte parse buffer and 3-byte chunks, so
// every event straddles refills.
func withTinyBuffers(f func()) {
	b, c := initialBuffer, chunkSize
	initialBuffer, chunkSize = 7, 3
	defer func() { initialBuffer, chunkSize = b, c }()
	f()
}

// FuzzParse checks that no input panics, that every error wraps a sentinel,
// that a successful parse yields valid events (valid UTF-8, Args a valid
// JSON object, no negative duration, counts that add up), and that the
// result does not depend on how the input is split into buffers.
func FuzzParse(f *testing.F) {
	dir := testutil.Testdata(f)
	for _, rel := range fuzzSeeds {
		gz, err := os.ReadFile(filepath.Join(dir, rel))
		if err != nil {
			continue
		}
		f.Add(testutil.Gunzip(f, gz))
		if len(gz) < 4000 {
			f.Add(gz)
		}
	}
	for _, s := range []string{
		`{"traceEvents":[{"ph":"X","cat":"kernel","name":"k\u00e9","pid":0,"tid":"stream 7","ts":"1.5e3","dur":2.0005,"args":{"bytes":1,"grid":[1,2,3],"x":[{"y":NaN}]}}],"schemaVersion":1}`,
		`[{"name":"a","ph":"X","ts":1,"dur":0,"tid":1,"pid":"CPU functions","args":{}}]`,
		`{"traceEvents":[{"ph":"s","name":"a\"\\\/\b\f\n\r\t\ud83d\ude00","cat":"\ud800\u0041\udc00","id":"0x1\u0030","ts":"\u0031"}]}`,
		`{"deviceProperties":[{"name":"x"}],"traceEvents":[{"ph":"M","name":"process_name","pid":1,"args":{"name":"[TP01-DP00-PP00-EP00] w"}},{"ph":"s","id":"x","cat":"ac2g"}]}`,
	} {
		f.Add([]byte(s))
	}
	f.Fuzz(func(t *testing.T, data []byte) {
		evs, fi, err := parseAll(data)
		if err != nil {
			known := false
			for _, s := range sentinels {
				known = known || errors.Is(err, s)
			}
			if !known {
				t.Fatalf("error wraps no sentinel: %v", err)
			}
			var pe *ParseError
			if errors.As(err, &pe) && (pe.Offset < 0 || pe.Offset > int64(len(data))*2+1<<20) {
				t.Fatalf("error offset %d out of range: %v", pe.Offset, err)
			}
		} else {
			var cats int64
			for _, n := range fi.CatCounts {
				cats += n
			}
			if cats != fi.Events || int64(len(evs)) != fi.Events {
				t.Fatalf("counts: cats %d, Events %d, sink %d", cats, fi.Events, len(evs))
			}
			if !json.Valid(fi.Metadata) {
				t.Fatalf("Metadata is not valid JSON: %s", fi.Metadata)
			}
			for i, e := range evs {
				if e.DurNs < 0 || (e.Has&HasTs != 0 && e.TsNs < 0) {
					t.Fatalf("event %d: negative time %+v", i, e)
				}
				if e.Args != nil && (!json.Valid(e.Args) || e.Args[0] != '{') {
					t.Fatalf("event %d: Args not a JSON object: %q", i, e.Args)
				}
				for _, s := range []string{e.Ph, e.Cat, e.Name, e.Pid, e.Tid, e.Grid, e.Block, e.BP, e.Scope} {
					if !utf8.ValidString(s) {
						t.Fatalf("event %d: invalid UTF-8 %q", i, s)
					}
				}
			}
		}
		var evs2 []Event
		var fi2 *FileInfo
		var err2 error
		withTinyBuffers(func() { evs2, fi2, err2 = parseAll(data) })
		if (err == nil) != (err2 == nil) || (err != nil && err.Error() != err2.Error()) {
			t.Fatalf("split input changes the error: %v vs %v", err, err2)
		}
		if err == nil && (!reflect.DeepEqual(evs, evs2) || !reflect.DeepEqual(fi, fi2)) {
			t.Fatalf("split input changes the result")
		}
	})
}
