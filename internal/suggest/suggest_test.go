package suggest

import "testing"

func TestClosest(t *testing.T) {
	commands := []string{"crossview", "diff", "evidence", "install", "kernel", "load", "query", "report", "run", "synth"}
	areas := []string{"overview", "sync", "kernels", "ops", "ranks", "memcpy", "steps", "gaps", "launch", "overlap", "graphs", "memory", "capture", "workload", "collectives", "phases", "all"}
	for _, c := range []struct {
		word  string
		known []string
		want  string
	}{
		{"reprot", commands, "report"},    // two neighbours swapped
		{"evidnce", commands, "evidence"}, // a letter left out
		{"crosview", commands, "crossview"},
		{"Report", commands, ""},     // known, whatever its case
		{"report", commands, ""},     // known
		{"repo", commands, "report"}, // the start of one word
		{"syncs", areas, "sync"},     // a letter too many
		{"kernel", areas, "kernels"},
		{"mem", areas, ""}, // the start of two words: no guess
		{"overlop", areas, "overlap"},
		{"xyz", areas, ""},      // nothing close
		{"ru", commands, "run"}, // one letter left out; no other command is one edit away
		{"", commands, ""},
		{"rank", []string{"rank", "ranks"}, ""},
		{"rnak", []string{"rank", "phase", "step", "window"}, "rank"},
		{"stpe", []string{"step", "steps"}, "step"},
	} {
		if got := Closest(c.word, c.known); got != c.want {
			t.Errorf("Closest(%q) = %q, want %q", c.word, got, c.want)
		}
	}
}

func TestDistance(t *testing.T) {
	for _, c := range []struct {
		a, b string
		want int
	}{
		{"", "", 0}, {"a", "", 1}, {"", "abc", 3}, {"abc", "abc", 0},
		{"abc", "acb", 1}, {"abc", "abd", 1}, {"abc", "abcd", 1}, {"kitten", "sitting", 3},
		{"αβγ", "αγβ", 1}, // letters, not bytes
	} {
		if got := distance(c.a, c.b); got != c.want {
			t.Errorf("distance(%q, %q) = %d, want %d", c.a, c.b, got, c.want)
		}
	}
}

func TestDidYouMean(t *testing.T) {
	known := []string{"rank", "phase", "step"}
	if got := DidYouMean("rnak", known, func(s string) string { return "--" + s }); got != " (did you mean --rank?)" {
		t.Errorf("DidYouMean = %q", got)
	}
	if got := DidYouMean("phase", known, nil); got != "" {
		t.Errorf("a known word: %q", got)
	}
	if got := DidYouMean("zzz", known, nil); got != "" {
		t.Errorf("nothing close: %q", got)
	}
}
