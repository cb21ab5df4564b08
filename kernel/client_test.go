package kernel

import (
	"bytes"
	"context"
	"encoding/json"
	"errors"
	"fmt"
	"log/slog"
	"math"
	"slices"
	"strconv"
	"strings"
	"sync"
	"testing"
	"time"

	"github.com/go-zeromq/zmq4"
)

// wait is how long a test waits for a message that should come; it only
// matters when the test is failing.
const wait = 10 * time.Second

// testExec is the Executor of the tests. The code of a cell picks what it
// does (see Execute).
type testExec struct {
	release chan struct{} // "block" and "block-fail" wait on it

	mu        sync.Mutex
	shutdowns []bool
	pubs      []Publisher
	idle      int // InterruptIdle calls
}

// InterruptIdle counts the interrupts that came with no cell running.
func (e *testExec) InterruptIdle() {
	e.mu.Lock()
	e.idle++
	e.mu.Unlock()
}

func newTestExec() *testExec { return &testExec{release: make(chan struct{})} }

func (e *testExec) Execute(ctx context.Context, code string, pub Publisher) (*Result, error) {
	e.mu.Lock()
	e.pubs = append(e.pubs, pub)
	e.mu.Unlock()
	switch {
	case code == "sleep":
		<-ctx.Done()
		return nil, ctx.Err()
	case code == "fail":
		return nil, &ExecError{EName: "ValueError", EValue: "bad value", Traceback: []string{"line 1"}}
	case code == "plain-error":
		return nil, errors.New("plain failure")
	case code == "panic":
		panic("boom")
	case code == "block", code == "block-fail":
		select {
		case <-e.release:
		case <-ctx.Done():
			return nil, ctx.Err()
		}
		if code == "block-fail" {
			return nil, &ExecError{EName: "ValueError", EValue: "failed after block"}
		}
		return nil, nil
	case code == "outputs":
		pub.Stream("stdout", "hello\n")
		pub.Display(map[string]any{"text/plain": "d"}, nil, "d1")
		pub.UpdateDisplay(map[string]any{"text/plain": "d2"}, nil, "d1")
		return &Result{Data: map[string]any{"text/plain": "42"}}, nil
	case code == "clear":
		// An output cleared at once, then one redrawn in place.
		pub.Stream("stdout", "old\n")
		pub.ClearOutput(false)
		pub.Display(map[string]any{"text/plain": "frame 1"}, nil, "")
		pub.ClearOutput(true)
		pub.Display(map[string]any{"text/plain": "frame 2"}, nil, "")
		return nil, nil
	case code == "hammer":
		// Publishing from many goroutines at once.
		var wg sync.WaitGroup
		for g := range 8 {
			wg.Go(func() {
				for i := range 100 {
					pub.Stream("stdout", fmt.Sprintf("%d-%d\n", g, i))
				}
			})
		}
		wg.Wait()
		return &Result{Data: map[string]any{"text/plain": "done"}}, nil
	case code == "nan":
		pub.Display(map[string]any{"application/json": math.NaN()}, nil, "")
		return &Result{Data: map[string]any{"text/plain": math.Inf(1)}}, nil
	case code == "hello":
		pub.Stream("stdout", "hello, world\n")
		return nil, nil
	case code == "err":
		pub.Stream("stderr", "oops\n")
		return nil, nil
	case code == "display":
		pub.Display(map[string]any{"text/html": "<b>x</b>", "text/plain": "x"}, nil, "")
		return nil, nil
	case code == "none":
		return nil, nil
	case code == "detach":
		pub.Display(map[string]any{"text/plain": "started"}, nil, "bg")
		pub.(interface{ Detach() }).Detach()
		return nil, nil
	case strings.HasPrefix(code, "big "):
		n, _ := strconv.Atoi(strings.TrimPrefix(code, "big "))
		chunk := strings.Repeat("x", 64<<10)
		for range n {
			pub.Stream("stdout", chunk)
		}
		return nil, nil
	}
	return &Result{Data: map[string]any{"text/plain": code}}, nil
}

func (e *testExec) Complete(code string, cursor int) ([]string, int, int) {
	r := []rune(code)
	start := cursor
	for start > 0 && r[start-1] != ' ' {
		start--
	}
	prefix := string(r[start:cursor])
	var m []string
	for _, w := range []string{"select", "set", "show"} {
		if strings.HasPrefix(w, prefix) {
			m = append(m, w)
		}
	}
	return m, start, cursor
}

func (e *testExec) Inspect(code string, cursor, detail int) (map[string]any, bool) {
	if strings.Contains(code, "select") {
		return map[string]any{"text/plain": fmt.Sprintf("SELECT help %d %d", cursor, detail)}, true
	}
	return nil, false
}

func (e *testExec) IsComplete(code string) (string, string) {
	switch {
	case strings.HasSuffix(strings.TrimSpace(code), ";"):
		return "complete", ""
	case code == "??":
		return "bogus", ""
	case strings.HasSuffix(code, ")"):
		return "invalid", ""
	}
	return "incomplete", "  "
}

func (e *testExec) Shutdown(restart bool) error {
	e.mu.Lock()
	e.shutdowns = append(e.shutdowns, restart)
	e.mu.Unlock()
	return nil
}

const testKey = "a0436f6c-1916-498b-8eb9-e81ab9368e84"

// testKernel is a kernel serving on loopback ports chosen by the system.
type testKernel struct {
	k      *kernel
	exec   *testExec
	ci     ConnectionInfo
	cancel context.CancelFunc
	done   chan error
	logs   *logBuffer
}

// startKernel starts a kernel; setup, when not nil, runs before serve.
func startKernel(t testing.TB, setup func(*kernel)) *testKernel {
	t.Helper()
	logs := &logBuffer{}
	ex := newTestExec()
	ci := ConnectionInfo{Transport: "tcp", IP: "127.0.0.1", SignatureScheme: "hmac-sha256", Key: testKey}
	k, err := newKernel(ci, ex, Info{Implementation: "tracebook", LanguageName: "sql", MimeType: "application/sql", FileExtension: ".sql"},
		slog.New(slog.NewTextHandler(logs, &slog.HandlerOptions{Level: slog.LevelDebug})))
	if err != nil {
		t.Fatalf("newKernel: %v", err)
	}
	if setup != nil {
		setup(k)
	}
	ctx, cancel := context.WithCancel(context.Background())
	tk := &testKernel{k: k, exec: ex, ci: k.conn, cancel: cancel, done: make(chan error, 1), logs: logs}
	go func() { tk.done <- k.serve(ctx) }()
	t.Cleanup(func() {
		cancel()
		select {
		case <-k.exited:
		case <-time.After(wait):
			t.Errorf("kernel did not stop")
		}
		if t.Failed() {
			t.Logf("kernel log:\n%s", logs.String())
		}
	})
	return tk
}

// logBuffer collects log output safely across goroutines.
type logBuffer struct {
	mu sync.Mutex
	b  bytes.Buffer
}

func (l *logBuffer) Write(p []byte) (int, error) {
	l.mu.Lock()
	defer l.mu.Unlock()
	return l.b.Write(p)
}

func (l *logBuffer) String() string {
	l.mu.Lock()
	defer l.mu.Unlock()
	return l.b.String()
}

// client is a Jupyter client over zmq4: DEALERs for shell, control and
// stdin, SUB for iopub, REQ for heartbeat.
type client struct {
	t       testing.TB
	key     []byte
	session string
	ctx     context.Context
	cancel  context.CancelFunc

	shell, control, stdin, iopub, hb zmq4.Socket
	shellIn, controlIn, stdinIn      chan Message
	iopubIn                          chan Message
	lastID                           string
	stash                            []Message // iopub messages read but not yet collected
}

// dial connects a client with routing identity id and waits until iopub
// delivers (the subscription reached the kernel).
func dial(t testing.TB, ci ConnectionInfo, id string) *client {
	t.Helper()
	ctx, cancel := context.WithCancel(context.Background())
	c := &client{
		t: t, key: []byte(ci.Key), session: newID(), ctx: ctx, cancel: cancel,
		shellIn: make(chan Message, 4096), controlIn: make(chan Message, 64), stdinIn: make(chan Message, 64),
		iopubIn: make(chan Message, 1<<16),
	}
	addr := func(port int) string { return fmt.Sprintf("tcp://%s:%d", ci.IP, port) }
	c.shell = zmq4.NewDealer(ctx, zmq4.WithID(zmq4.SocketIdentity(id+"-shell")))
	c.control = zmq4.NewDealer(ctx, zmq4.WithID(zmq4.SocketIdentity(id+"-control")))
	c.stdin = zmq4.NewDealer(ctx, zmq4.WithID(zmq4.SocketIdentity(id+"-stdin")))
	c.iopub = zmq4.NewSub(ctx)
	c.hb = zmq4.NewReq(ctx)
	for _, d := range []struct {
		s    zmq4.Socket
		port int
	}{{c.shell, ci.ShellPort}, {c.control, ci.ControlPort}, {c.stdin, ci.StdinPort}, {c.iopub, ci.IOPubPort}, {c.hb, ci.HBPort}} {
		if err := d.s.Dial(addr(d.port)); err != nil {
			t.Fatalf("dial %d: %v", d.port, err)
		}
	}
	if err := c.iopub.SetOption(zmq4.OptionSubscribe, ""); err != nil {
		t.Fatal(err)
	}
	go c.recvLoop(c.shell, c.shellIn)
	go c.recvLoop(c.control, c.controlIn)
	go c.recvLoop(c.stdin, c.stdinIn)
	go c.recvLoop(c.iopub, c.iopubIn)
	t.Cleanup(c.close)
	// A subscription takes effect asynchronously: probe with kernel_info
	// until its status messages come back on iopub.
	deadline := time.Now().Add(wait)
	for {
		id := c.send(c.shell, "kernel_info_request", map[string]any{})
		c.reply(c.shellIn, id)
		if _, ok := c.waitIOPub(id, "status", 200*time.Millisecond); ok {
			c.collect(id) // drain to idle
			return c
		}
		if time.Now().After(deadline) {
			t.Fatalf("iopub never delivered")
		}
	}
}

func (c *client) close() {
	c.cancel()
	for _, s := range []zmq4.Socket{c.shell, c.control, c.stdin, c.iopub, c.hb} {
		s.Close()
	}
}

func (c *client) recvLoop(s zmq4.Socket, ch chan Message) {
	for {
		zm, err := s.Recv()
		if err != nil {
			if c.ctx.Err() != nil {
				return
			}
			continue
		}
		msg, err := Decode(zm.Frames, c.key)
		if err != nil {
			c.t.Errorf("client: decode: %v", err)
			continue
		}
		select {
		case ch <- msg:
		case <-c.ctx.Done():
			return
		}
	}
}

// send sends a request on s and returns its msg_id.
func (c *client) send(s zmq4.Socket, msgType string, content any) string {
	c.t.Helper()
	frames := c.frames(msgType, content, c.key)
	if err := s.SendMulti(zmq4.NewMsgFrom(frames...)); err != nil {
		c.t.Fatalf("send %s: %v", msgType, err)
	}
	return c.lastID
}

func (c *client) frames(msgType string, content any, key []byte) [][]byte {
	c.t.Helper()
	b, err := json.Marshal(content)
	if err != nil {
		c.t.Fatal(err)
	}
	id := newID()
	c.lastID = id
	frames, err := Encode(Message{
		Header:  Header{MsgID: id, Session: c.session, Username: "test", Date: "2026-01-01T00:00:00.000000Z", MsgType: msgType, Version: ProtocolVersion},
		Content: b,
	}, key)
	if err != nil {
		c.t.Fatal(err)
	}
	return frames
}

// reply waits for the reply to parent on ch; replies to other requests
// fail the test.
func (c *client) reply(ch chan Message, parent string) Message {
	c.t.Helper()
	select {
	case m := <-ch:
		if m.Parent.MsgID != parent {
			c.t.Fatalf("got reply %s to %s, want reply to %s", m.Header.MsgType, m.Parent.MsgID, parent)
		}
		return m
	case <-time.After(wait):
		c.t.Fatalf("no reply to %s", parent)
	}
	return Message{}
}

// waitIOPub waits for an iopub message of type msgType parented to parent.
// Messages read on the way, the match included, stay for collect.
func (c *client) waitIOPub(parent, msgType string, d time.Duration) (Message, bool) {
	match := func(m Message) bool { return m.Parent.MsgID == parent && m.Header.MsgType == msgType }
	for _, m := range c.stash {
		if match(m) {
			return m, true
		}
	}
	t := time.NewTimer(d)
	defer t.Stop()
	for {
		select {
		case m := <-c.iopubIn:
			c.stash = append(c.stash, m)
			if match(m) {
				return m, true
			}
		case <-t.C:
			return Message{}, false
		}
	}
}

// collect returns the iopub messages parented to parent, up to its status
// idle. Messages of other parents stay for later calls.
func (c *client) collect(parent string) []Message {
	c.t.Helper()
	var out []Message
	isIdle := func(m Message) bool {
		return m.Header.MsgType == "status" && content(c.t, m)["execution_state"] == "idle"
	}
	kept := c.stash[:0]
	done := false
	for _, m := range c.stash {
		if !done && m.Parent.MsgID == parent {
			out = append(out, m)
			done = isIdle(m)
			continue
		}
		kept = append(kept, m)
	}
	c.stash = kept
	if done {
		return out
	}
	t := time.NewTimer(wait)
	defer t.Stop()
	for {
		select {
		case m := <-c.iopubIn:
			if m.Parent.MsgID != parent {
				c.stash = append(c.stash, m)
				continue
			}
			out = append(out, m)
			if isIdle(m) {
				return out
			}
		case <-t.C:
			c.t.Fatalf("no idle for %s; got %v", parent, types(out))
		}
	}
}

// execute runs code and returns the reply and the iopub messages.
func (c *client) execute(code string, extra map[string]any) (Message, []Message) {
	c.t.Helper()
	req := map[string]any{"code": code, "silent": false, "store_history": true, "user_expressions": map[string]any{}, "allow_stdin": false, "stop_on_error": true}
	for k, v := range extra {
		req[k] = v
	}
	id := c.send(c.shell, "execute_request", req)
	r := c.reply(c.shellIn, id)
	return r, c.collect(id)
}

func content(t testing.TB, m Message) map[string]any {
	t.Helper()
	var v map[string]any
	if err := json.Unmarshal(m.Content, &v); err != nil {
		t.Fatalf("content of %s: %v", m.Header.MsgType, err)
	}
	return v
}

// types lists message types; status messages read as status:STATE.
func types(ms []Message) []string {
	var out []string
	for _, m := range ms {
		s := m.Header.MsgType
		if s == "status" {
			var c statusContent
			json.Unmarshal(m.Content, &c)
			s += ":" + c.ExecutionState
		}
		out = append(out, s)
	}
	return out
}

func itoa(i int) string { return strconv.Itoa(i) }

// setVar sets *p to v and returns a function that restores it.
func setVar[T any](p *T, v T) func() {
	old := *p
	*p = v
	return func() { *p = old }
}

func discardLog() *slog.Logger { return slog.New(slog.DiscardHandler) }

func sortDurations(d []time.Duration) { slices.Sort(d) }
