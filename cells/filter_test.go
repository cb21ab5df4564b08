package cells

import (
	"errors"
	"reflect"
	"testing"

	"github.com/tracebook/tracebook/analysis/evidence"
)

func TestParseFilter(t *testing.T) {
	tests := []struct {
		name     string
		in       []string
		want     evidence.Filter
		wantRest []string
	}{
		{"empty", nil, evidence.Filter{}, nil},
		{"all", []string{"--trace", "llama", "--rank", "3", "--window", "120..180.5", "--phase", "decode", "--stream", "7"},
			evidence.Filter{Trace: "llama", Rank: 3, HasRank: true, WindowStartNs: 120_000_000, WindowEndNs: 180_500_000, Phase: "decode", Stream: 7, HasStream: true}, nil},
		{"inline values", []string{"--trace=a=b", "--rank=0", "--phase=step:12"},
			evidence.Filter{Trace: "a=b", HasRank: true, Step: 12, HasStep: true}, nil},
		{"rest in order", []string{"sync", "--rank", "1", "--html", "r.html", "extra"},
			evidence.Filter{Rank: 1, HasRank: true}, []string{"sync", "--html", "r.html", "extra"}},
		{"window exact ns", []string{"--window", "0.000001..0.000002"}, evidence.Filter{WindowStartNs: 1, WindowEndNs: 2}, nil},
		{"window no leading digit", []string{"--window", ".5..2."}, evidence.Filter{WindowStartNs: 500_000, WindowEndNs: 2_000_000}, nil},
		{"phase prefill", []string{"--phase", "prefill"}, evidence.Filter{Phase: "prefill"}, nil},
		{"phase mixed", []string{"--phase", "mixed"}, evidence.Filter{Phase: "mixed"}, nil},
		{"stream as written", []string{"--stream", "stream 7"}, evidence.Filter{Stream: 7, HasStream: true}, nil},
		{"one dash", []string{"-rank", "2", "-phase=decode", "-", "-5", "-x"},
			evidence.Filter{Rank: 2, HasRank: true, Phase: "decode"}, []string{"-", "-5", "-x"}},
	}
	for _, tc := range tests {
		t.Run(tc.name, func(t *testing.T) {
			got, rest, err := ParseFilter(tc.in)
			if err != nil {
				t.Fatalf("ParseFilter(%q) error: %v", tc.in, err)
			}
			if !reflect.DeepEqual(got, tc.want) || !reflect.DeepEqual(rest, tc.wantRest) {
				t.Errorf("ParseFilter(%q) = %+v, %q, want %+v, %q", tc.in, got, rest, tc.want, tc.wantRest)
			}
		})
	}
}

func TestParseFilter_Errors(t *testing.T) {
	tests := []struct {
		in   []string
		want string
	}{
		{[]string{"--rank"}, "--rank needs a value"},
		{[]string{"--rank", "x"}, `--rank: "x" is not a rank (a non-negative integer)`},
		{[]string{"--rank", "-1"}, `--rank: "-1" is not a rank (a non-negative integer)`},
		{[]string{"--rank", "1", "--rank=2"}, "--rank given twice"},
		{[]string{"--trace="}, "--trace: the trace name is empty"},
		{[]string{"--window", "5"}, `--window: "5" is not START..END in milliseconds`},
		{[]string{"--window", "a..b"}, `--window: "a..b" is not START..END in milliseconds`},
		{[]string{"--window", "1..2.0000001"}, `--window: "1..2.0000001" is not START..END in milliseconds`},
		{[]string{"--window", "-1..2"}, `--window: "-1..2" is not START..END in milliseconds`},
		{[]string{"--window", "10..5"}, "--window: start 10 ms is not before end 5 ms"},
		{[]string{"--window", "5..5"}, "--window: start 5 ms is not before end 5 ms"},
		{[]string{"--phase", "foo"}, `--phase: "foo" is not prefill, decode, mixed or step:N`},
		{[]string{"--phase", "step:x"}, `--phase: "step:x" is not step:N with N a step number`},
		{[]string{"--stream", "x"}, `--stream: "x" is not a stream number`},
	}
	for _, tc := range tests {
		t.Run(tc.want, func(t *testing.T) {
			_, _, err := ParseFilter(tc.in)
			if err == nil || err.Error() != tc.want {
				t.Fatalf("ParseFilter(%q) error = %v, want %q", tc.in, err, tc.want)
			}
			if !errors.Is(err, ErrUsage) {
				t.Errorf("ParseFilter(%q) error %v is not ErrUsage", tc.in, err)
			}
		})
	}
}
