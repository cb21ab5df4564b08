package cells

import (
	"strconv"
	"strings"
)

// duckErrorTypes are the exception type names DuckDB puts before " Error: "
// in its messages (ExceptionTypeToString in DuckDB's exception.cpp).
var duckErrorTypes = []string{
	"Invalid", "Out of Range", "Conversion", "Unknown Type", "Decimal", "Mismatch Type",
	"Divide by Zero", "Object Size", "Invalid type", "Serialization", "TransactionContext",
	"Not implemented", "Expression", "Catalog", "Parser", "Planner", "Scheduler", "Executor",
	"Constraint", "Index", "Stat", "Connection", "Syntax", "Settings", "Binder", "Network",
	"Optimizer", "NullPointer", "IO", "INTERRUPT", "FATAL", "INTERNAL", "Invalid Input",
	"Out of Memory", "Permission", "Parameter Not Resolved", "Parameter Not Allowed",
	"Dependency", "HTTP", "Missing Extension", "Auto-load", "Sequence", "INVALID CONFIGURATION",
}

// duckError turns a DuckDB error message into a Jupyter error: the
// exception type is the error name ("Binder Error"), the first line after
// it the value, and every line of the message (DuckDB's "LINE n:" and caret
// lines included, spacing kept) the traceback. Anything an engine put
// before the type ("query: ") is dropped. bodyLine > 1 says the SQL started
// on that line of the cell, and adds a line that says so. ok is false when
// msg holds no DuckDB exception type.
func duckError(msg string, bodyLine int) (e *ExecError, ok bool) {
	at, name := -1, ""
	for _, t := range duckErrorTypes {
		i := strings.Index(msg, t+" Error: ")
		if i < 0 || at >= 0 && i > at || i == at && len(t) < len(name)-len(" Error") {
			continue
		}
		at, name = i, t+" Error"
	}
	if at < 0 {
		return nil, false
	}
	text := strings.TrimRight(msg[at:], "\n ")
	lines := strings.Split(text, "\n")
	value := strings.TrimPrefix(lines[0], name+": ")
	if bodyLine > 1 && strings.Contains(text, "LINE ") {
		lines = append(lines, "(LINE 1 is line "+strconv.Itoa(bodyLine)+" of the cell, the first line below %%sql)")
	}
	return &ExecError{EName: name, EValue: value, Traceback: lines}, true
}
