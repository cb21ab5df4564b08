package trace

import (
	"fmt"
	"os"
	"path/filepath"
	"regexp"
	"sort"
	"strconv"
	"strings"
)

// Job is the files of one profiling session of one job: the per-rank files
// loaded together.
type Job struct {
	Name    string    // the directory's name, or the file's stem for a single file
	Session string    // the session loaded when the folder held several ("" when it held one)
	Files   []FileRef // ascending by rank where known, then by path
	// OtherSessions are the sessions of the same folder that were not
	// loaded, oldest first. Load one of them with a glob that matches its
	// files (for example DIR/*.<session>*.json.gz).
	OtherSessions []string
}

// FileRef is one trace file of a job and what its name says about its rank.
type FileRef struct {
	Path string
	// Rank and RankSource: from the file name ("filename": rank-N, rank_N,
	// rankN; "filename_coords": TP-i-DP-j-PP-k-EP-l), else -1 and "" until
	// ResolveRank sees the parsed file.
	Rank       int
	RankSource string
	// Coordinates from the file name (SGLang writes TP-i-DP-j-PP-k-EP-l).
	TP, DP, PP, EP int
	HasCoords      bool
	// StampNs is the capture time written in the name
	// ({worker}.{stamp}.pt.trace.json), in ns; 0 when absent.
	StampNs int64
}

// The rank sources, in the order ResolveRank tries them.
const (
	RankFromMergedPrefix = "merged_prefix"    // process names carry [TPxx-DPxx-PPxx-EPxx]
	RankFromFilename     = "filename"         // ...rank-N... in the file name
	RankFromFileCoords   = "filename_coords"  // ...TP-i-DP-j-PP-k-EP-l... in the file name
	RankFromDistributed  = "distributed_info" // top-level distributedInfo.rank
	RankDefault          = "default"          // nothing said: rank 0, an evidence gap
)

// SessionGap is the largest gap between the capture stamps of two files of
// one profiling session. vLLM and torch's trace handler stamp each worker's
// file when its profiler stops; the workers of one session stop within
// seconds of each other, and separate sessions are minutes apart.
const SessionGap = 60e9 // ns

var (
	rankRE   = regexp.MustCompile(`(?i)(?:^|[^a-z0-9])rank[-_]?(\d+)`)
	stampRE  = regexp.MustCompile(`\.(\d{10,19})\.pt\.trace\.json(?:\.gz)?$`)
	traceExt = []string{".json", ".json.gz"}
)

// isTraceName reports whether a file name looks like a trace.
func isTraceName(name string) bool {
	for _, ext := range traceExt {
		if strings.HasSuffix(strings.ToLower(name), ext) {
			return true
		}
	}
	return false
}

// stem strips the trace extensions from a file name.
func stem(name string) string {
	for _, ext := range []string{".json.gz", ".json", ".gz"} {
		if strings.HasSuffix(strings.ToLower(name), ext) {
			name = name[:len(name)-len(ext)]
			break
		}
	}
	return strings.TrimSuffix(name, ".pt.trace")
}

// NewFileRef reads what the file name says: rank, coordinates, stamp.
func NewFileRef(path string) FileRef {
	ref := FileRef{Path: path, Rank: -1}
	base := filepath.Base(path)
	if m := stampRE.FindStringSubmatch(base); m != nil {
		ref.StampNs = stampNs(m[1])
		base = base[:len(base)-len(m[0])]
	}
	if m := rankRE.FindStringSubmatch(base); m != nil {
		if r, err := strconv.Atoi(m[1]); err == nil && r < 1<<24 {
			ref.Rank, ref.RankSource = r, RankFromFilename
		}
	}
	if c, ok := parseCoords(base); ok && strings.Contains(base, "DP") {
		ref.TP, ref.DP, ref.PP, ref.EP, ref.HasCoords = c.TP, c.DP, c.PP, c.EP, true
	}
	return ref
}

// stampNs converts a name's capture stamp to ns by its number of digits:
// 10 seconds, 13 milliseconds, 16 microseconds, 19 nanoseconds (others are
// read as milliseconds, the torch trace handler's older unit).
func stampNs(digits string) int64 {
	v, err := strconv.ParseInt(digits, 10, 64)
	if err != nil {
		return 0
	}
	switch {
	case len(digits) <= 10:
		return v * 1e9
	case len(digits) <= 13:
		return v * 1e6
	case len(digits) <= 16:
		return v * 1e3
	}
	return v
}

// Discover turns paths (files, directories or globs) into jobs. A directory
// is one job: its trace files (*.json, *.json.gz, not recursive) grouped
// into profiling sessions by the capture stamps in their names (files whose
// stamps are within SessionGap of the previous one belong to one session;
// files without a stamp form one session of their own); the newest session
// is loaded and the others listed in OtherSessions. Files named directly or
// matched by globs are loaded as given: those in one directory form one job.
//
// Two files of one job that claim the same rank are an error
// (ErrDuplicateRank), as is a directory without trace files or a glob that
// matches nothing (ErrNoTraceFiles).
func Discover(paths []string) ([]Job, error) {
	var jobs []Job
	loose := map[string][]string{} // directory → files named or globbed
	var looseOrder []string
	addLoose := func(p string) {
		d := filepath.Dir(p)
		if _, ok := loose[d]; !ok {
			looseOrder = append(looseOrder, d)
		}
		loose[d] = append(loose[d], p)
	}
	if len(paths) == 0 {
		return nil, fmt.Errorf("discover: %w: no path given", ErrNoTraceFiles)
	}
	for _, p := range paths {
		if strings.ContainsAny(p, "*?[") {
			if _, err := os.Stat(p); err != nil { // a literal name with glob characters wins
				matches, gerr := filepath.Glob(p)
				if gerr != nil {
					return nil, fmt.Errorf("discover %s: bad pattern: %w", p, gerr)
				}
				n := 0
				for _, m := range matches {
					if st, err := os.Stat(m); err == nil && !st.IsDir() && isTraceName(m) {
						addLoose(m)
						n++
					}
				}
				if n == 0 {
					return nil, fmt.Errorf("discover %s: %w: the pattern matches no .json or .json.gz file", p, ErrNoTraceFiles)
				}
				continue
			}
		}
		st, err := os.Stat(p)
		if err != nil {
			return nil, fmt.Errorf("discover %s: %w: %w", p, ErrUnreadable, err)
		}
		if !st.IsDir() {
			addLoose(p)
			continue
		}
		job, err := discoverDir(p)
		if err != nil {
			return nil, err
		}
		jobs = append(jobs, job)
	}
	for _, d := range looseOrder {
		files := dedupe(loose[d])
		name := filepath.Base(d)
		if len(files) == 1 {
			name = stem(filepath.Base(files[0]))
		}
		job := Job{Name: name}
		for _, f := range files {
			job.Files = append(job.Files, NewFileRef(f))
		}
		if err := finishJob(&job); err != nil {
			return nil, err
		}
		jobs = append(jobs, job)
	}
	return jobs, nil
}

func dedupe(files []string) []string {
	seen := map[string]bool{}
	var out []string
	for _, f := range files {
		c := filepath.Clean(f)
		if !seen[c] {
			seen[c] = true
			out = append(out, f)
		}
	}
	return out
}

// discoverDir makes the job of one directory.
func discoverDir(dir string) (Job, error) {
	entries, err := os.ReadDir(dir)
	if err != nil {
		return Job{}, fmt.Errorf("discover %s: %w: %w", dir, ErrUnreadable, err)
	}
	var refs []FileRef
	for _, e := range entries {
		if e.IsDir() || !isTraceName(e.Name()) {
			continue
		}
		refs = append(refs, NewFileRef(filepath.Join(dir, e.Name())))
	}
	if len(refs) == 0 {
		return Job{}, fmt.Errorf("discover %s: %w: the directory holds no .json or .json.gz file", dir, ErrNoTraceFiles)
	}
	sessions := groupSessions(refs)
	last := sessions[len(sessions)-1]
	job := Job{Name: filepath.Base(filepath.Clean(dir)), Files: last.files}
	if len(sessions) > 1 {
		job.Session = last.name
		for _, s := range sessions[:len(sessions)-1] {
			job.OtherSessions = append(job.OtherSessions, s.name)
		}
	}
	if err := finishJob(&job); err != nil {
		return Job{}, err
	}
	return job, nil
}

type session struct {
	name  string
	start int64
	files []FileRef
}

// groupSessions clusters files by capture stamp, oldest session first. A
// session is named after the stamp of its first file as written in its name
// (files without a stamp: "unstamped", sorted first).
func groupSessions(refs []FileRef) []session {
	sort.Slice(refs, func(i, j int) bool {
		if refs[i].StampNs != refs[j].StampNs {
			return refs[i].StampNs < refs[j].StampNs
		}
		return refs[i].Path < refs[j].Path
	})
	var out []session
	for _, r := range refs {
		n := len(out)
		switch {
		case r.StampNs == 0 && n > 0 && out[n-1].start == 0:
		case r.StampNs != 0 && n > 0 && out[n-1].start != 0 && r.StampNs-lastStamp(out[n-1]) <= SessionGap:
		default:
			name := "unstamped"
			if m := stampRE.FindStringSubmatch(filepath.Base(r.Path)); m != nil {
				name = m[1]
			}
			out = append(out, session{name: name, start: r.StampNs})
			n++
		}
		out[n-1].files = append(out[n-1].files, r)
	}
	return out
}

func lastStamp(s session) int64 { return s.files[len(s.files)-1].StampNs }

// finishJob derives ranks from file-name coordinates, checks that no rank
// is claimed twice and sorts the files.
func finishJob(job *Job) error {
	coords := map[string]Coords{}
	for _, f := range job.Files {
		if f.HasCoords && f.RankSource == "" {
			coords[f.Path] = Coords{TP: f.TP, DP: f.DP, PP: f.PP, EP: f.EP}
		}
	}
	if len(coords) > 0 {
		assignRanks(coords)
		for i, f := range job.Files {
			if c, ok := coords[f.Path]; ok {
				job.Files[i].Rank, job.Files[i].RankSource = c.Rank, RankFromFileCoords
			}
		}
	}
	sort.SliceStable(job.Files, func(i, j int) bool {
		a, b := job.Files[i], job.Files[j]
		if (a.Rank >= 0) != (b.Rank >= 0) {
			return a.Rank >= 0
		}
		if a.Rank != b.Rank {
			return a.Rank < b.Rank
		}
		return a.Path < b.Path
	})
	return CheckRanks(job.Name, job.Files)
}

// CheckRanks returns an ErrDuplicateRank error when two files claim the same
// rank. Files whose rank is not known yet (-1) are ignored; the loader calls
// it again with the ranks ResolveRank found.
func CheckRanks(job string, files []FileRef) error {
	seen := map[int]string{}
	for _, f := range files {
		if f.Rank < 0 {
			continue
		}
		if other, ok := seen[f.Rank]; ok {
			return fmt.Errorf("job %s: %w: %s and %s both claim rank %d", job, ErrDuplicateRank, other, f.Path, f.Rank)
		}
		seen[f.Rank] = f.Path
	}
	return nil
}

// ResolveRank says which rank a parsed file holds, trying in order: the
// coordinates of a merged trace's process names (the file holds several
// ranks: the smallest is returned, and each event takes its pid's rank from
// info.PidCoords), the file name (rank-N, then TP-i-DP-j-PP-k-EP-l), the
// top-level distributedInfo.rank, and finally rank 0 with source
// RankDefault, which the loader records as an evidence gap.
func ResolveRank(ref FileRef, info *FileInfo) (rank int, source string) {
	if info != nil && len(info.PidCoords) > 0 {
		return info.Ranks()[0], RankFromMergedPrefix
	}
	if ref.Rank >= 0 && ref.RankSource != "" {
		return ref.Rank, ref.RankSource
	}
	if info != nil && info.HasDistributedRank {
		return info.DistributedRank, RankFromDistributed
	}
	return 0, RankDefault
}
