// Package fence holds the test that keeps the layering of docs/DESIGN.md true:
// the analysis core, the SQL presets, the pipeline, the notebook language and
// the viewer never reach cgo, DuckDB or zmq4, and the Jupyter protocol and
// the notebook language do not import each other. It has no code of its own.
package fence
