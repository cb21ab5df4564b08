package kernel

import "context"

// Publisher sends outputs of the running request to iopub, parented to it.
//
// A Publisher is safe for use by several goroutines. Calls made after
// Execute has returned are dropped: the reply and the idle status have gone
// out, and an output after them would have no cell to land in; a cell that
// leaves work running calls the kernel publisher's Detach method
// (interface{ Detach() }) to keep its display updates flowing. Publishing
// never blocks the caller on a slow client (see the package doc).
type Publisher interface {
	// Stream sends a stream message; name is "stdout" or "stderr".
	//
	// Spec: https://jupyter-client.readthedocs.io/en/latest/messaging.html#streams-stdout-stderr-etc
	Stream(name, text string)
	// Display sends display_data. displayID "" means none; otherwise it goes
	// in transient.display_id so that UpdateDisplay can replace the output.
	//
	// Spec: https://jupyter-client.readthedocs.io/en/latest/messaging.html#display-data
	Display(data, metadata map[string]any, displayID string)
	// UpdateDisplay sends update_display_data for an earlier Display with the
	// same displayID.
	//
	// Spec: https://jupyter-client.readthedocs.io/en/latest/messaging.html#update-display-data
	UpdateDisplay(data, metadata map[string]any, displayID string)
	// ClearOutput sends clear_output: the client clears the cell's outputs,
	// at once, or with wait true only when the next output arrives (so that
	// an output redrawn in place does not flicker).
	//
	// Spec: https://jupyter-client.readthedocs.io/en/latest/messaging.html#clear-output
	ClearOutput(wait bool)
}

// Result is an execute_result; nil means none. Data is a MIME bundle
// (mime type → value) and should hold "text/plain".
//
// Spec: https://jupyter-client.readthedocs.io/en/latest/messaging.html#id7
type Result struct{ Data, Metadata map[string]any }

// ExecError is returned by Execute for a failed cell: the reply has status
// "error" and iopub gets an error message with the same fields.
//
// Spec: https://jupyter-client.readthedocs.io/en/latest/messaging.html#execution-errors
type ExecError struct {
	EName, EValue string
	Traceback     []string
}

// Error returns "EName: EValue".
func (e *ExecError) Error() string { return e.EName + ": " + e.EValue }

// Executor runs the cells of a notebook. The kernel calls it from one
// goroutine at a time: shell requests are served in order, one at a time.
// The one exception is Shutdown, which may come while an Execute that
// ignored its cancelled ctx for 3 seconds is still running.
//
// user_expressions of an execute_request are evaluated by calling Execute
// once per expression after the cell, with a Publisher that drops outputs;
// the Result's Data and Metadata become the expression's value.
type Executor interface {
	// Execute runs one cell. ctx is cancelled by interrupt_request or SIGINT.
	Execute(ctx context.Context, code string, pub Publisher) (*Result, error)
	// Complete: cursor in Unicode code points; returns matches and the replaced range [start,end) in code points.
	Complete(code string, cursor int) (matches []string, start, end int)
	// Inspect: data is a MIME bundle; found false when nothing is known.
	Inspect(code string, cursor, detailLevel int) (data map[string]any, found bool)
	// IsComplete: status is "complete", "incomplete", "invalid" or "unknown".
	IsComplete(code string) (status, indent string)
	// Shutdown releases resources; restart true when a restart follows.
	Shutdown(restart bool) error
}

// IdleInterrupter is an Executor that may have work running between cells
// (a load a cell started in the background): an interrupt_request or
// SIGINT that comes while no cell runs calls InterruptIdle, which should
// cancel that work. It must not block.
type IdleInterrupter interface {
	InterruptIdle()
}

// Info is what kernel_info_reply says about the language.
//
// Spec: https://jupyter-client.readthedocs.io/en/latest/messaging.html#kernel-info
type Info struct {
	Implementation        string // e.g. "tracebook"
	ImplementationVersion string
	LanguageName          string // language_info.name, e.g. "sql"
	LanguageVersion       string
	MimeType              string // e.g. "application/sql"
	FileExtension         string // e.g. ".sql"
	PygmentsLexer         string
	CodemirrorMode        string
	Banner                string
	HelpLinks             []HelpLink
}

// HelpLink is one entry of the notebook's Help menu.
type HelpLink struct {
	Text string `json:"text"`
	URL  string `json:"url"`
}
