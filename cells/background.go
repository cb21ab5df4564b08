package cells

import (
	"context"
	"errors"
	"fmt"
	"strings"

	"github.com/tracebook/tracebook/analysis/trace"
)

// A background load (%trace load --background) runs behind the cells: the
// load cell returns once the load has started, its progress display goes
// on updating after it, and the notebook stays usable meanwhile.
//
//   - %trace list answers at once, with the traces loaded so far and the
//     load's progress; %help does not wait either. In a deterministic
//     session (`tracebook run`) they wait too, so that a re-run notebook
//     shows the same outputs whatever the load's speed.
//   - Every other cell first waits for the load (it may read what the load
//     adds). Interrupting the waiting cell cancels the load too.
//   - An interrupt with no cell running (Session.Interrupt) cancels it.
//   - The load is atomic as in the foreground: cancelled or failed, it adds
//     nothing. Its error is shown in its own display and, once, on stderr
//     of the next cell that waits for it.
//
// Only one load runs in the background at a time.

// Detacher is a Publisher whose outputs may outlive the cell: after
// Detach, outputs sent once the cell has returned still reach the client
// (a display update lands wherever that display is) instead of being
// dropped. The kernel's publisher and `tracebook run`'s recorder have it.
type Detacher interface {
	Detach()
}

// bgLoad is the load running behind the cells.
type bgLoad struct {
	what   string
	prog   *loadProgress
	cancel context.CancelFunc
	done   chan struct{} // closed when the load has ended
	res    *trace.LoadResult
	err    error
}

// startBackgroundLoad starts load in the background and returns the load
// cell's value. The progress p has begun on the cell's publisher.
func (s *Session) startBackgroundLoad(c *call, p *loadProgress, load func(ctx context.Context) (*trace.LoadResult, error)) (*Result, error) {
	s.mu.Lock()
	if s.bg != nil {
		what := s.bg.what
		s.mu.Unlock()
		return nil, fmt.Errorf("a background load of %s is already running: %%trace list shows its progress; wait for it (any other cell does) or interrupt it", what)
	}
	ctx, cancel := context.WithCancel(context.Background())
	bg := &bgLoad{what: p.what, prog: p, cancel: cancel, done: make(chan struct{})}
	s.bg = bg
	s.mu.Unlock()
	if d, ok := c.pub.(Detacher); ok {
		d.Detach()
	}
	go func() {
		res, err := load(ctx)
		p.end(res, err, ctx.Err() != nil)
		bg.res, bg.err = res, err
		if ctx.Err() != nil {
			bg.err = context.Canceled
		}
		cancel()
		s.invalidate()
		close(bg.done)
	}()
	return textResult(fmt.Sprintf("loading %s in the background: %%trace list shows its progress; any other cell waits for it, and an interrupt cancels it\n", p.what)), nil
}

// Interrupt cancels the background load, if one runs; the kernel calls it
// for an interrupt that comes with no cell running.
func (s *Session) Interrupt() {
	s.mu.Lock()
	bg := s.bg
	s.mu.Unlock()
	if bg != nil {
		bg.cancel()
	}
}

// awaitLoad makes a cell wait for the background load, unless the cell
// does not need the database to be complete (noWait). The load's outcome
// is reported once, on the first cell that waits for it. An interrupt of
// the waiting cell cancels the load.
func (s *Session) awaitLoad(ctx context.Context, code string, pub Publisher) error {
	s.mu.Lock()
	bg := s.bg
	s.mu.Unlock()
	if bg == nil || (noWait(code) && !s.opts.Deterministic) {
		return nil
	}
	select {
	case <-bg.done:
	default:
		if !s.opts.Deterministic { // whether it still runs depends on the machine
			pub.Stream("stderr", fmt.Sprintf("waiting for the background load of %s…\n", bg.what))
		}
		select {
		case <-bg.done:
		case <-ctx.Done():
			bg.cancel()
			<-bg.done
		}
	}
	s.mu.Lock()
	if s.bg == bg {
		s.bg = nil
	}
	s.mu.Unlock()
	switch {
	case errors.Is(bg.err, context.Canceled):
		pub.Stream("stderr", fmt.Sprintf("the background load of %s was cancelled: nothing was added\n", bg.what))
	case bg.err != nil:
		pub.Stream("stderr", fmt.Sprintf("the background load of %s failed, nothing was added: %v\n", bg.what, bg.err))
	}
	return ctx.Err()
}

// noWait reports whether a cell runs without waiting for the background
// load: %trace list (it shows the load) and %help.
func noWait(code string) bool {
	cell, err := Parse(code)
	if err != nil || cell.Kind != LineMagic {
		return false
	}
	switch cell.Name {
	case "help":
		return true
	case "trace":
		return len(cell.Args) > 0 && cell.Args[0] == "list"
	}
	return false
}

// backgroundNote is what %trace list adds about the background load: ""
// when none runs.
func (s *Session) backgroundNote() string {
	s.mu.Lock()
	bg := s.bg
	s.mu.Unlock()
	if bg == nil {
		return ""
	}
	select {
	case <-bg.done:
		if bg.err != nil {
			return fmt.Sprintf("the background load of %s ended without adding anything (the next cell says why)\n", bg.what)
		}
		return ""
	default:
	}
	return "in the background: " + strings.TrimSuffix(bg.prog.text(), "\n") + "\n"
}

// stopBackground cancels the background load and waits for it to end.
func (s *Session) stopBackground() {
	s.mu.Lock()
	bg := s.bg
	s.bg = nil
	s.mu.Unlock()
	if bg != nil {
		bg.cancel()
		<-bg.done
	}
}
