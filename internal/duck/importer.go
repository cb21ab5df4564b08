//go:build cgo

package duck

import (
	"github.com/tracebook/tracebook/analysis/trace"
)

// The seam to analysis/trace: files are grouped into jobs by trace.Discover,
// parsed by trace.ParseFile and given their rank by trace.ResolveRank
// (merged-pid prefix, file name, distributedInfo.rank, then 0 with an
// evidence gap). Tests replace parseFile to inject failures.

type (
	job     = trace.Job
	fileRef = trace.FileRef
)

var (
	parseFile   = trace.ParseFile
	discover    = trace.Discover
	resolveRank = trace.ResolveRank
)
