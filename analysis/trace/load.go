package trace

// LoadOptions are the options of `%trace load` and `tracebook load`. The
// importer reads the ones that concern parsing; the engine the rest.
type LoadOptions struct {
	// Name of the loaded trace; derived from the path when empty.
	Name string
	// Rank overrides the rank of a single-rank load; -1 (or HasRank false) keeps the resolved rank.
	Rank    int
	HasRank bool
	// NoPython skips python_function events to save memory.
	NoPython bool
	// Window loads only events overlapping [StartNs, EndNs), relative to the
	// trace's first timestamp; both zero means everything.
	WindowStartNs, WindowEndNs int64
	// Steps loads only steps FirstStep..LastStep (inclusive); both zero means everything.
	FirstStep, LastStep int
}

// Progress reports a load in flight. It is sent at most a few times a second.
type Progress struct {
	File       string // path of the file being read
	FileIndex  int    // from 0
	Files      int
	BytesRead  int64 // uncompressed JSON bytes read so far in this file
	BytesTotal int64 // size on disk of this file (compressed for .gz); 0 when unknown
	DiskRead   int64 // bytes read from disk so far in this file
	Events     int64 // events parsed so far over all files
	Done       bool
}

// LoadResult says what one load added.
type LoadResult struct {
	Trace         string   // name in the traces table
	Files         int      // files loaded
	Ranks         []int    // ranks loaded, ascending
	Events        int64    // events loaded
	JSONBytes     int64    // uncompressed JSON bytes parsed (0 when served from the cache)
	Cached        bool     // served from the parse cache
	Session       string   // the profiling session loaded, when the folder held several
	OtherSessions []string // the sessions of the same folder that were not loaded
	Gaps          []string // evidence gaps found at load time (rank defaulted to 0, ...)
}

// ImporterVersion numbers what the importer writes. Raise it whenever a
// change alters the events a file yields (a kind mapping, a typed field, a
// time rule) or the FileInfo that describes it (the cache stores FileInfo
// as JSON: an entry from before a new field decodes it as zero): the
// engine's parse cache keys its entries by it, so entries written by an
// older importer are parsed again instead of served.
//
// 3: FileInfo.CCMajor/CCMinor (deviceProperties computeMajor/computeMinor).
// 4: the legacy bare-array format's events without a cat are CPU operators
// and ProfilerStep# annotations, not other (legacyKind).
// 5: FileInfo.Producer "profiler_step" (evidence.ProducerProfilerStep) for what was
// "training": an inference loop under torch.profiler writes ProfilerStep#
// annotations too.
// 6: FileInfo.GPUNumSMs (deviceProperties numSms).
const ImporterVersion = 6
