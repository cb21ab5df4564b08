package cells

import "errors"

// Errors that Execute's callers and tests match with errors.Is. The wrapped
// message says what was at fault.
var (
	// ErrUsage: a magic was given arguments it does not take. Execute turns
	// it into a Jupyter error named "UsageError" that quotes the magic's usage.
	ErrUsage = errors.New("usage error")
	// ErrUnknownMagic: the cell names a magic that is not in the table.
	ErrUnknownMagic = errors.New("unknown magic")
	// ErrNotAvailable: the magic's hook is not filled in this build.
	ErrNotAvailable = errors.New("not available in this build")
	// ErrNoTrace: %trace load found no trace to load.
	ErrNoTrace = errors.New("no trace found")
	// ErrShutdown: the session was shut down.
	ErrShutdown = errors.New("session is shut down")
)

// usageError is an error whose message reads as is, and that matches
// ErrUsage under errors.Is.
type usageError struct{ msg string }

func (e *usageError) Error() string        { return e.msg }
func (e *usageError) Is(target error) bool { return target == ErrUsage }
