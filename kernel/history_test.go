package kernel

import (
	"reflect"
	"testing"
)

func TestHistory(t *testing.T) {
	entries := []historyEntry{{1, "select 1"}, {2, "%trace load a"}, {3, "select 2"}, {4, "select 1"}, {5, "show tables"}}
	n := func(i int) *int { return &i }
	tests := []struct {
		name string
		req  historyRequest
		want [][]any
	}{
		{"tail 2", historyRequest{HistAccessType: "tail", N: n(2)}, [][]any{{1, 4, "select 1"}, {1, 5, "show tables"}}},
		{"tail more than there is", historyRequest{HistAccessType: "tail", N: n(99)}, [][]any{{1, 1, "select 1"}, {1, 2, "%trace load a"}, {1, 3, "select 2"}, {1, 4, "select 1"}, {1, 5, "show tables"}}},
		{"tail with output", historyRequest{HistAccessType: "tail", N: n(1), Output: true}, [][]any{{1, 5, []any{"show tables", nil}}}},
		{"range", historyRequest{HistAccessType: "range", Start: 2, Stop: n(4)}, [][]any{{1, 2, "%trace load a"}, {1, 3, "select 2"}}},
		{"range to the end", historyRequest{HistAccessType: "range", Start: 5}, [][]any{{1, 5, "show tables"}}},
		{"range of another session", historyRequest{HistAccessType: "range", Session: 7, Start: 1}, [][]any{}},
		{"search", historyRequest{HistAccessType: "search", Pattern: "select*"}, [][]any{{1, 1, "select 1"}, {1, 3, "select 2"}, {1, 4, "select 1"}}},
		{"search unique", historyRequest{HistAccessType: "search", Pattern: "select*", Unique: true}, [][]any{{1, 3, "select 2"}, {1, 4, "select 1"}}},
		{"search n", historyRequest{HistAccessType: "search", Pattern: "*", N: n(1)}, [][]any{{1, 5, "show tables"}}},
		{"search class", historyRequest{HistAccessType: "search", Pattern: "select [2-9]"}, [][]any{{1, 3, "select 2"}}},
		{"unknown access type", historyRequest{HistAccessType: "nope"}, [][]any{}},
	}
	for _, tc := range tests {
		t.Run(tc.name, func(t *testing.T) {
			if got := history(entries, tc.req); !reflect.DeepEqual(got, tc.want) {
				t.Errorf("history(%+v) = %v, want %v", tc.req, got, tc.want)
			}
		})
	}
}

func TestGlobMatch(t *testing.T) {
	tests := []struct {
		pattern, s string
		want       bool
	}{
		{"*", "", true},
		{"*", "anything/with/slashes", true},
		{"a*c", "abbbc", true},
		{"a*c", "abbbd", false},
		{"a?c", "abc", true},
		{"a?c", "ac", false},
		{"a?c", "aéc", true},
		{"*load*", "%trace load x", true},
		{"[abc]x", "bx", true},
		{"[^abc]x", "bx", false},
		{"[a-c]*", "c", true},
		{"[]]", "]", true},
		{"[", "[", true},
		{"[x", "y", false},
		{"SELECT", "select", false},
		{"**a", "ba", true},
	}
	for _, tc := range tests {
		if got := globMatch(tc.pattern, tc.s); got != tc.want {
			t.Errorf("globMatch(%q, %q) = %v, want %v", tc.pattern, tc.s, got, tc.want)
		}
	}
}
