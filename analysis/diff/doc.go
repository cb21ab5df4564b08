// Package diff compares two traces of the same workload: "did the fix
// work?". It reads the evidence bundles of a base and a test trace (and,
// when given, their cross-views), normalises every quantity per step (per
// token where a serving trace names its tokens), matches ranks, steps and
// phases, and reports the change of each quantity with its significance
// against step-to-step variation, the cross-view nodes that grew or shrank,
// and the findings of the two traces matched into resolved, new and
// persisting. When the two traces were captured in different contexts (GPU
// model, world size, producer, platform, capture settings, %context values)
// the diff says so at the top, before any number.
//
// GenerateView renders the diff of an Input (both sides' bundles and
// cross-views, as the offline page carries them) for a view: the rank and
// phase the reader chose, the findings evaluated for that slice, the change
// tables sorted. The native page writer and the viewer module both run it.
// A chart (chart.go) draws each time quantity's base and test bars, the
// significant changes marked.
//
// Collecting the bundles (running the presets) is left to package pipeline;
// the rules are analysis/findings'; the single-file page around the HTML
// fragment is the composition root's. The package imports the standard
// library and the analysis core only, so it builds for GOOS=wasip1.
package diff
