package cells

import (
	"context"
	"reflect"
	"testing"
)

// TestContextStreamsWhatItRecords checks that %context reports each key it
// sets or clears on stdout, and that showing the record streams nothing.
func TestContextStreamsWhatItRecords(t *testing.T) {
	s := NewSession(nil, SessionOptions{})
	tests := []struct {
		code string
		want []published
	}{
		{"%context tp=4 max-num-seqs=256", []published{
			{"stream", "stdout", "context: tp = 4 recorded; findings and %diff use it\n"},
			{"stream", "stdout", "context: max-num-seqs = 256 recorded; findings and %diff use it\n"},
		}},
		{"%context tp=", []published{{"stream", "stdout", "context: tp cleared\n"}}},
		{"%context", nil},
	}
	for _, tc := range tests {
		rec := &recorder{}
		if _, err := s.Execute(context.Background(), tc.code, rec); err != nil {
			t.Fatalf("Execute(%q): %v", tc.code, err)
		}
		if !reflect.DeepEqual(rec.events, tc.want) {
			t.Errorf("Execute(%q) published %q, want %q", tc.code, rec.events, tc.want)
		}
	}
	if got := s.Context(); !reflect.DeepEqual(got, map[string]string{"max-num-seqs": "256"}) {
		t.Errorf("Context() = %v", got)
	}
}
