package trace

import (
	"errors"
	"os"
	"path/filepath"
	"reflect"
	"strings"
	"testing"

	"github.com/tracebook/tracebook/internal/testutil"
)

func touch(t *testing.T, dir string, names ...string) {
	t.Helper()
	for _, n := range names {
		p := filepath.Join(dir, n)
		if err := os.MkdirAll(filepath.Dir(p), 0o755); err != nil {
			t.Fatal(err)
		}
		if err := os.WriteFile(p, []byte(`{"traceEvents":[]}`), 0o644); err != nil {
			t.Fatal(err)
		}
	}
}

func TestNewFileRef(t *testing.T) {
	tests := []struct {
		name       string
		rank       int
		source     string
		stamp      int64
		hasCoords  bool
		tp, dp, pp int
	}{
		{"host_123.1716000000000000000.pt.trace.json.gz", -1, "", 1716000000000000000, false, 0, 0, 0},
		{"worker0_step_12.1694128201545.pt.trace.json.gz", -1, "", 1694128201545000000, false, 0, 0, 0},
		{"vllm-rank-3.1716000000000000000.pt.trace.json.gz", 3, RankFromFilename, 1716000000000000000, false, 0, 0, 0},
		{"graph_capture_rank_0.1773709742341309550.pt.trace.json.gz", 0, RankFromFilename, 1773709742341309550, false, 0, 0, 0},
		{"rank-34.Jul_15_10_52_41.1074.pt.trace.json.gz", 34, RankFromFilename, 0, false, 0, 0, 0},
		{"rank0.json.gz", 0, RankFromFilename, 0, false, 0, 0, 0},
		{"sampled_rank-1.json.gz", 1, RankFromFilename, 0, false, 0, 0, 0},
		{"frank12.json", -1, "", 0, false, 0, 0, 0},
		{"1716000000-TP-1-DP-0-PP-1-EP-0.trace.json.gz", -1, "", 0, true, 1, 0, 1},
	}
	for _, tc := range tests {
		t.Run(tc.name, func(t *testing.T) {
			r := NewFileRef(filepath.Join("d", tc.name))
			if r.Rank != tc.rank || r.RankSource != tc.source || r.StampNs != tc.stamp || r.HasCoords != tc.hasCoords ||
				r.TP != tc.tp || r.DP != tc.dp || r.PP != tc.pp {
				t.Errorf("NewFileRef(%q) = %+v", tc.name, r)
			}
		})
	}
}

func TestDiscover(t *testing.T) {
	t.Run("vllm sessions", func(t *testing.T) {
		dir := filepath.Join(t.TempDir(), "llama-tp2")
		touch(t, dir,
			// session 1: two workers 0.4 s apart
			"h_11.1716000000000000000.pt.trace.json.gz",
			"h_12.1716000000400000000.pt.trace.json.gz",
			// session 2, ten minutes later
			"h_11.1716000600000000000.pt.trace.json.gz",
			"h_12.1716000601500000000.pt.trace.json.gz",
			"notes.txt",
		)
		jobs, err := Discover([]string{dir})
		if err != nil {
			t.Fatal(err)
		}
		if len(jobs) != 1 {
			t.Fatalf("Discover = %d jobs, want 1", len(jobs))
		}
		j := jobs[0]
		if j.Name != "llama-tp2" || j.Session != "1716000600000000000" || !reflect.DeepEqual(j.OtherSessions, []string{"1716000000000000000"}) {
			t.Errorf("job = %+v", j)
		}
		if len(j.Files) != 2 || filepath.Base(j.Files[0].Path) != "h_11.1716000600000000000.pt.trace.json.gz" {
			t.Errorf("files = %+v", j.Files)
		}
	})
	t.Run("one session", func(t *testing.T) {
		dir := filepath.Join(t.TempDir(), "dlrm")
		touch(t, dir, "worker0_step_12.1694128201545.pt.trace.json.gz", "worker1_step_12.1694128201556.pt.trace.json.gz")
		jobs, err := Discover([]string{dir})
		if err != nil {
			t.Fatal(err)
		}
		if j := jobs[0]; j.Session != "" || j.OtherSessions != nil || len(j.Files) != 2 {
			t.Errorf("job = %+v", j)
		}
	})
	t.Run("rank file names sorted", func(t *testing.T) {
		dir := filepath.Join(t.TempDir(), "job")
		touch(t, dir, "trace-rank-10.json", "trace-rank-2.json", "trace-rank-0.json.gz")
		jobs, err := Discover([]string{dir})
		if err != nil {
			t.Fatal(err)
		}
		var ranks []int
		for _, f := range jobs[0].Files {
			ranks = append(ranks, f.Rank)
		}
		if !reflect.DeepEqual(ranks, []int{0, 2, 10}) {
			t.Errorf("ranks = %v, want [0 2 10]", ranks)
		}
	})
	t.Run("sglang coords", func(t *testing.T) {
		dir := filepath.Join(t.TempDir(), "sg")
		touch(t, dir, "p-TP-0-DP-0-PP-0-EP-0.trace.json.gz", "p-TP-1-DP-0-PP-0-EP-0.trace.json.gz")
		jobs, err := Discover([]string{dir})
		if err != nil {
			t.Fatal(err)
		}
		f := jobs[0].Files
		if f[0].Rank != 0 || f[1].Rank != 1 || f[1].RankSource != RankFromFileCoords {
			t.Errorf("files = %+v", f)
		}
	})
	t.Run("single file and glob", func(t *testing.T) {
		dir := t.TempDir()
		touch(t, dir, "a/run.pt.trace.json.gz", "b/r-rank-0.json", "b/r-rank-1.json")
		jobs, err := Discover([]string{filepath.Join(dir, "a/run.pt.trace.json.gz"), filepath.Join(dir, "b/*.json")})
		if err != nil {
			t.Fatal(err)
		}
		if len(jobs) != 2 || jobs[0].Name != "run" || jobs[1].Name != "b" || len(jobs[1].Files) != 2 {
			t.Errorf("jobs = %+v", jobs)
		}
	})
}

func TestDiscover_Errors(t *testing.T) {
	dir := t.TempDir()
	touch(t, dir, "dup/x-rank-1.json", "dup/y-rank-1.json.gz", "other/readme.md")
	if err := os.MkdirAll(filepath.Join(dir, "empty"), 0o755); err != nil {
		t.Fatal(err)
	}
	tests := []struct {
		name string
		path string
		want error
		msg  string
	}{
		{"empty dir", filepath.Join(dir, "empty"), ErrNoTraceFiles, "the directory holds no .json or .json.gz file"},
		{"no traces", filepath.Join(dir, "other"), ErrNoTraceFiles, "no trace files"},
		{"duplicate rank", filepath.Join(dir, "dup"), ErrDuplicateRank, "both claim rank 1"},
		{"missing", filepath.Join(dir, "nope"), ErrUnreadable, "unreadable file"},
		{"glob without match", filepath.Join(dir, "*.json"), ErrNoTraceFiles, "the pattern matches no"},
	}
	for _, tc := range tests {
		t.Run(tc.name, func(t *testing.T) {
			_, err := Discover([]string{tc.path})
			if !errors.Is(err, tc.want) {
				t.Fatalf("Discover(%s) = %v, want %v", tc.path, err, tc.want)
			}
			if !contains(err.Error(), tc.msg) || !contains(err.Error(), tc.path) {
				t.Errorf("Discover(%s) = %q, want it to name the path and say %q", tc.path, err, tc.msg)
			}
		})
	}
}

func TestResolveRank(t *testing.T) {
	merged := &FileInfo{PidCoords: map[string]Coords{"1": {Rank: 2}, "2": {Rank: 1}}}
	dist := &FileInfo{HasDistributedRank: true, DistributedRank: 5}
	tests := []struct {
		name   string
		ref    FileRef
		info   *FileInfo
		rank   int
		source string
	}{
		{"merged", FileRef{Rank: 3, RankSource: RankFromFilename}, merged, 1, RankFromMergedPrefix},
		{"filename over distributedInfo", FileRef{Rank: 3, RankSource: RankFromFilename}, dist, 3, RankFromFilename},
		{"distributedInfo", FileRef{Rank: -1}, dist, 5, RankFromDistributed},
		{"default", FileRef{Rank: -1}, &FileInfo{}, 0, RankDefault},
	}
	for _, tc := range tests {
		t.Run(tc.name, func(t *testing.T) {
			r, s := ResolveRank(tc.ref, tc.info)
			if r != tc.rank || s != tc.source {
				t.Errorf("ResolveRank = %d, %q, want %d, %q", r, s, tc.rank, tc.source)
			}
		})
	}
}

func contains(s, sub string) bool { return strings.Contains(s, sub) }

// TestDiscoverSharedTraces discovers every trace set of the shared
// collection (one directory = one job) and resolves the ranks of its files.
func TestDiscoverSharedTraces(t *testing.T) {
	dir := testutil.SharedTraces(t)
	sets, err := filepath.Glob(filepath.Join(dir, "*", "*"))
	if err != nil {
		t.Fatal(err)
	}
	for _, set := range sets {
		if st, err := os.Stat(set); err != nil || !st.IsDir() {
			continue
		}
		rel, _ := filepath.Rel(dir, set)
		t.Run(rel, func(t *testing.T) {
			jobs, err := Discover([]string{set})
			if err != nil {
				t.Fatal(err)
			}
			if len(jobs) != 1 || jobs[0].Name != filepath.Base(set) || jobs[0].Session != "" {
				t.Fatalf("Discover = %+v", jobs)
			}
			if rel != "param/dlrm_8rank" {
				return
			}
			files := jobs[0].Files
			if len(files) != 8 {
				t.Fatalf("%d files, want 8", len(files))
			}
			for i := range files {
				info, err := ParseFile(files[i].Path, LoadOptions{}, nil, nil)
				if err != nil {
					t.Fatal(err)
				}
				r, src := ResolveRank(files[i], info)
				if src != RankFromDistributed {
					t.Errorf("%s: rank from %s, want %s", files[i].Path, src, RankFromDistributed)
				}
				files[i].Rank = r
			}
			if err := CheckRanks(jobs[0].Name, files); err != nil {
				t.Error(err)
			}
		})
	}
}
