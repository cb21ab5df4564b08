// Package report renders the tracebook report: the Executive Summary, the
// trace metadata, the GPU call tree with its sync frames, the CPU
// cross-check, at most 3 critical issues and 2 follow-ups with their fixes,
// confirmed evidence apart from hypotheses, the Evidence table (Area |
// Evidence | Interpretation, areas.go) above the folded preset tables, a
// Perfetto inspection guide, the evidence gaps and the next lever — as
// Markdown or as HTML. Numbers and tables are written the way package
// analysis/table writes them everywhere. Charts drawn
// by package chart go with it (charts.go): GPU span per rank, by kernel
// class, the top kernels, the step time per step with its idle time split
// by cause, and beside each issue the timeline of its Perfetto window
// (timeline.go: host thread and GPU stream lanes, the finding's intervals
// marked), which the engine reduces from the window's events (the Window
// carries it, so the viewer redraws it for any filter).
//
// The pipeline reads top to bottom in Generate: roll the bundle's evidence up
// for the view's filter, run the findings rules with the view's thresholds,
// fill a Doc, then print it in the one format asked for. Every string that
// comes from a trace is treated as text: it is escaped in HTML and made inert
// in Markdown (no raw HTML passes through).
//
// Running presets and building the Bundle is left to analysis/evidence and
// the engine; the rules are analysis/findings'; the trees are
// analysis/crossview's. The single-file interactive HTML (bundle and viewer
// module embedded) is assembled by package wasm around the HTMLFragment this
// package writes. The package builds for GOOS=wasip1: it is the code the
// offline viewer runs.
package report
