//go:build cgo

package duck

import (
	"fmt"
	"os"
	"path/filepath"
	"regexp"
	"sort"
	"strconv"
	"strings"

	"github.com/tracebook/tracebook/analysis/trace"
)

// The seam to analysis/trace: the engine parses files with trace.ParseFile
// and groups them into a job here. Rank resolution follows ANCHORS §10.1:
// merged-pid prefix, then file name, then distributedInfo.rank, then 0 with
// an evidence gap.

// job is the files of one profiling session, loaded as one trace.
type job struct {
	Name          string
	Session       string
	Files         []fileRef
	OtherSessions []string
}

// fileRef is one file of a job and the rank its name gives, if any.
type fileRef struct {
	Path       string
	Rank       int
	RankSource string // filename, or "" when the name says nothing
}

var parseFile = trace.ParseFile

var fileRankRE = regexp.MustCompile(`(?i)(?:^|[^a-z])(?:rank|worker)[-_]?(\d+)`)

// discover expands paths (files, directories, globs) into one job.
func discover(paths []string) ([]job, error) {
	var files []string
	for _, p := range paths {
		st, err := os.Stat(p)
		switch {
		case err == nil && st.IsDir():
			entries, err := os.ReadDir(p)
			if err != nil {
				return nil, fmt.Errorf("reading %s: %w", p, err)
			}
			n := 0
			for _, e := range entries {
				if !e.IsDir() && isTraceName(e.Name()) {
					files = append(files, filepath.Join(p, e.Name()))
					n++
				}
			}
			if n == 0 {
				return nil, fmt.Errorf("%s: %w (*.json, *.json.gz)", p, trace.ErrNoTraceFiles)
			}
		case err == nil:
			files = append(files, p)
		default:
			m, gerr := filepath.Glob(p)
			if gerr != nil || len(m) == 0 {
				return nil, fmt.Errorf("trace %s: %w: %w", p, trace.ErrUnreadable, err)
			}
			files = append(files, m...)
		}
	}
	if len(files) == 0 {
		return nil, trace.ErrNoTraceFiles
	}
	sort.Strings(files)
	j := job{Name: jobName(paths, files)}
	for _, f := range files {
		ref := fileRef{Path: f}
		if m := fileRankRE.FindStringSubmatch(filepath.Base(f)); m != nil {
			if r, err := strconv.Atoi(m[1]); err == nil {
				ref.Rank, ref.RankSource = r, "filename"
			}
		}
		j.Files = append(j.Files, ref)
	}
	return []job{j}, nil
}

func isTraceName(n string) bool {
	return strings.HasSuffix(n, ".json") || strings.HasSuffix(n, ".json.gz")
}

func jobName(paths, files []string) string {
	base := paths[0]
	if len(files) == 1 {
		base = files[0]
	}
	base = filepath.Base(filepath.Clean(base))
	for _, ext := range []string{".gz", ".json", ".trace", ".pt"} {
		base = strings.TrimSuffix(base, ext)
	}
	if base == "" || base == "." || base == "/" {
		base = "trace"
	}
	return base
}

// resolveRank returns the rank of a file that is not merged, and where it came from.
func resolveRank(ref fileRef, info *trace.FileInfo) (int, string) {
	switch {
	case ref.RankSource != "":
		return ref.Rank, ref.RankSource
	case info.HasDistributedRank:
		return info.DistributedRank, "distributed_info"
	}
	return 0, "default"
}
