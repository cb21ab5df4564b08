package cli

import (
	"bytes"
	"path/filepath"
	"strconv"
	"strings"
	"testing"
)

func TestCrossviewFolded(t *testing.T) {
	dir := filepath.Join("..", "testdata", "param", "dlrm_8rank")
	for _, view := range []string{"gpu", "cpu"} {
		var stdout, stderr bytes.Buffer
		code := run([]string{"crossview", dir, "--rank", "1", "--format", "folded", "--view", view, "--min-pct", "0", "--depth", "0", "--cache", "-"}, &stdout, &stderr)
		if code != 0 {
			t.Fatalf("crossview exited %d: %s", code, stderr.String())
		}
		var sum int64
		for _, line := range strings.Split(strings.TrimSpace(stdout.String()), "\n") {
			k := strings.LastIndexByte(line, ' ')
			n, err := strconv.ParseInt(line[k+1:], 10, 64)
			if err != nil || !strings.Contains(line[:k], ";") && view == "gpu" && !strings.HasPrefix(line, "[no launching") {
				t.Fatalf("bad folded line %q", line)
			}
			sum += n
		}
		if sum <= 0 {
			t.Errorf("--view %s: folded stacks sum to %d", view, sum)
		}
	}
	var stdout, stderr bytes.Buffer
	if code := run([]string{"crossview", dir, "--rank", "1", "--cache", "-"}, &stdout, &stderr); code != 0 {
		t.Fatalf("crossview exited %d: %s", code, stderr.String())
	}
	for _, want := range []string{"GPU view: GPU time by the host stack that launched it (trace dlrm_8rank, rank 1, whole trace)", "\nCPU view: ", "\nVerdict: "} {
		if !strings.Contains(stdout.String(), want) {
			t.Errorf("tree output lacks %q", want)
		}
	}
}

func TestCrossviewErrors(t *testing.T) {
	tests := []struct {
		args []string
		want string
	}{
		{[]string{"crossview"}, "no trace given"},
		{[]string{"crossview", "x", "--format", "svg"}, `--format "svg": want tree, folded or html`},
		{[]string{"crossview", "x", "--view", "disk"}, `--view "disk": want gpu or cpu`},
		{[]string{"crossview", "x", "--depth", "-1"}, `--depth "-1"`},
		{[]string{"crossview", "x", "--min-pct", "200"}, `--min-pct "200"`},
		{[]string{"crossview", "x", "--bogus"}, "unknown option --bogus"},
		{[]string{"crossview", "x", "--rank"}, "--rank needs a value"},
	}
	for _, tc := range tests {
		var stdout, stderr bytes.Buffer
		if code := run(tc.args, &stdout, &stderr); code == 0 || !strings.Contains(stderr.String(), tc.want) {
			t.Errorf("run(%q) = %d, stderr %q, want an error with %q", tc.args, code, stderr.String(), tc.want)
		}
	}
}
