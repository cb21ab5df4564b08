package kernel

import (
	"context"
	"crypto/rand"
	"encoding/json"
	"errors"
	"fmt"
	"log/slog"
	"net"
	"os"
	"os/signal"
	"runtime/debug"
	"strings"
	"sync"
	"sync/atomic"
	"time"
	"unicode/utf8"

	"github.com/go-zeromq/zmq4"
)

// ConnectionInfo is the connection file Jupyter writes for the kernel.
//
// Spec: https://jupyter-client.readthedocs.io/en/latest/kernels.html#connection-files
type ConnectionInfo struct {
	Transport       string `json:"transport"` // only "tcp" is supported
	IP              string `json:"ip"`
	ShellPort       int    `json:"shell_port"`
	ControlPort     int    `json:"control_port"`
	StdinPort       int    `json:"stdin_port"`
	IOPubPort       int    `json:"iopub_port"`
	HBPort          int    `json:"hb_port"`
	SignatureScheme string `json:"signature_scheme"` // "hmac-sha256"
	Key             string `json:"key"`              // empty: messages are not signed
	KernelName      string `json:"kernel_name,omitempty"`
}

// ReadConnectionFile reads and checks a connection file.
func ReadConnectionFile(path string) (ConnectionInfo, error) {
	var ci ConnectionInfo
	b, err := os.ReadFile(path)
	if err != nil {
		return ci, fmt.Errorf("read connection file: %w", err)
	}
	if err := json.Unmarshal(b, &ci); err != nil {
		return ci, fmt.Errorf("connection file %s: %w", path, err)
	}
	return ci, nil
}

// Run serves the Jupyter kernel described by the connection file connFile
// until a shutdown_request arrives or ctx is cancelled, and returns nil after
// a clean shutdown (also when a restart was requested: the client starts a
// new process). Cells run on exec; info fills kernel_info_reply; log gets
// every diagnostic (Run writes nothing to stdout or stderr).
//
// SIGINT interrupts the running cell (as interrupt_request does) instead of
// ending the process; Run restores the default handling when it returns.
//
//	err := kernel.Run(ctx, "/run/user/1000/jupyter/kernel-1.json", exec, info, logger)
func Run(ctx context.Context, connFile string, exec Executor, info Info, log *slog.Logger) error {
	ci, err := ReadConnectionFile(connFile)
	if err != nil {
		return err
	}
	k, err := newKernel(ci, exec, info, log)
	if err != nil {
		return err
	}
	stop := k.handleSIGINT()
	defer stop()
	return k.serve(ctx)
}

// handleSIGINT makes SIGINT interrupt the running cell until the returned
// function is called or the kernel exits.
func (k *kernel) handleSIGINT() (stop func()) {
	sig := make(chan os.Signal, 1)
	signal.Notify(sig, os.Interrupt)
	done := make(chan struct{})
	go func() {
		for {
			select {
			case <-sig:
				k.log.Info("SIGINT: interrupting the running cell")
				k.interrupt()
			case <-k.exited:
				return
			case <-done:
				return
			}
		}
	}()
	var once sync.Once
	return func() {
		once.Do(func() {
			signal.Stop(sig)
			close(done)
		})
	}
}

// Capacities and times of the kernel. Variables so that tests can shorten
// them.
var (
	// iopubQueueSize is how many iopub messages may wait to be sent; beyond
	// it messages are dropped with a log line rather than block execution.
	iopubQueueSize = 1024
	// iopubHWM bounds zmq4's own queue behind the PUB socket (it drops
	// silently when full).
	iopubHWM = 10000
	// shellQueueSize is how many shell requests may wait for the one in
	// progress; beyond it the shell reader stops reading (TCP back-pressure).
	shellQueueSize = 256
	// flushTimeout bounds the wait for iopub to reach subscribers at exit.
	flushTimeout = 2 * time.Second
	// shellStopTimeout bounds the wait for a running cell to return after
	// shutdown cancelled it.
	shellStopTimeout = 3 * time.Second
	// subscriberWait bounds, from the kernel's start, how long iopub
	// messages wait for a first subscriber (see sendLoop).
	subscriberWait = 2 * time.Second
)

// kernel is one running kernel: five sockets, a shell worker and an iopub
// sender.
type kernel struct {
	conn    ConnectionInfo // ports as bound (a 0 port is replaced by the real one)
	key     []byte
	exec    Executor
	info    Info
	log     *slog.Logger
	session string

	shell, control, stdin, iopub, hb zmq4.Socket
	iopubL                           *guardListener

	ctx    context.Context // cancelled at shutdown; parent of every Execute ctx
	cancel context.CancelFunc

	shellQ    chan queued
	arrived   atomic.Uint64 // sequence number of the last queued shell request
	stopping  chan struct{} // closed when shutdown begins
	shellDone chan struct{} // closed when the shell worker returns
	exited    chan struct{} // closed when shutdown is complete
	closing   atomic.Bool
	once      sync.Once
	readers   sync.WaitGroup
	// onQueued, when set (tests), is called after a shell request is queued.
	onQueued func()

	outMu     sync.RWMutex
	out       chan outMsg
	outClosed bool
	outDone   chan struct{}
	flushing  atomic.Bool // shutdown began: watch iopub messages go out
	dropped   atomic.Int64
	lastDrop  atomic.Int64 // unix nanoseconds of the last drop log line

	mu         sync.Mutex
	cancelExec context.CancelFunc // of the running Execute, nil when none

	// Shell worker state.
	count     int
	hist      []historyEntry
	abortUpTo uint64 // execute requests queued up to this sequence number are aborted
}

// queued is a shell request with its arrival sequence number.
type queued struct {
	msg Message
	seq uint64
}

type outMsg struct {
	frames [][]byte
	id     string
}

// newKernel binds the five sockets of ci.
func newKernel(ci ConnectionInfo, exec Executor, info Info, log *slog.Logger) (*kernel, error) {
	if log == nil {
		log = slog.New(slog.DiscardHandler)
	}
	if ci.Transport != "" && ci.Transport != "tcp" {
		return nil, fmt.Errorf("transport %q is not supported (only tcp)", ci.Transport)
	}
	if ci.Key != "" && ci.SignatureScheme != "hmac-sha256" {
		return nil, fmt.Errorf("%w %q (only hmac-sha256)", ErrUnsupportedScheme, ci.SignatureScheme)
	}
	if ci.IP == "" {
		ci.IP = "127.0.0.1"
	}
	ctx, cancel := context.WithCancel(context.Background())
	k := &kernel{
		conn:      ci,
		key:       []byte(ci.Key),
		exec:      exec,
		info:      info,
		log:       log,
		session:   newID(),
		ctx:       ctx,
		cancel:    cancel,
		shellQ:    make(chan queued, shellQueueSize),
		stopping:  make(chan struct{}),
		shellDone: make(chan struct{}),
		exited:    make(chan struct{}),
		out:       make(chan outMsg, iopubQueueSize),
		outDone:   make(chan struct{}),
	}
	guardLog.Store(log)
	zlog := slog.NewLogLogger(log.Handler(), slog.LevelWarn)
	opts := []zmq4.Option{zmq4.WithTimeout(writeTimeout), zmq4.WithLogger(zlog)}
	registerGuard()
	bind := func(s zmq4.Socket, port *int) error {
		ep := fmt.Sprintf("%s://%s", guardScheme, net.JoinHostPort(ci.IP, fmt.Sprint(*port)))
		if err := s.Listen(ep); err != nil {
			return fmt.Errorf("bind %s: %w", ep, err)
		}
		if a, ok := s.Addr().(*net.TCPAddr); ok {
			*port = a.Port
		}
		return nil
	}
	k.shell = zmq4.NewRouter(ctx, opts...)
	k.control = zmq4.NewRouter(ctx, opts...)
	k.stdin = zmq4.NewRouter(ctx, opts...)
	k.iopub = zmq4.NewPub(ctx, opts...)
	k.hb = zmq4.NewRep(ctx, opts...)
	socks := []struct {
		s    zmq4.Socket
		port *int
	}{
		{k.shell, &k.conn.ShellPort}, {k.control, &k.conn.ControlPort}, {k.stdin, &k.conn.StdinPort},
		{k.iopub, &k.conn.IOPubPort}, {k.hb, &k.conn.HBPort},
	}
	for _, s := range socks {
		if err := bind(s.s, s.port); err != nil {
			k.closeSockets()
			cancel()
			return nil, err
		}
	}
	if err := k.iopub.SetOption(zmq4.OptionHWM, iopubHWM); err != nil {
		k.log.Warn("set iopub high-water mark", "err", err)
	}
	if v, ok := listeners.Load(k.iopub.Addr().String()); ok {
		k.iopubL = v.(*guardListener)
	}
	return k, nil
}

// serve runs the kernel until shutdown.
func (k *kernel) serve(ctx context.Context) error {
	k.log.Info("kernel started", "ip", k.conn.IP, "shell", k.conn.ShellPort, "control", k.conn.ControlPort,
		"stdin", k.conn.StdinPort, "iopub", k.conn.IOPubPort, "hb", k.conn.HBPort, "signed", len(k.key) > 0)
	go k.sendLoop()
	// starting is queued before any request is read: published after the
	// readers start, it could follow the busy status of a first request
	// that came at once (a loaded machine ran the shell reader first).
	k.publish(Header{}, "status", statusContent{"starting"})
	go k.heartbeat()
	go k.shellWorker()
	k.readers.Add(3)
	go k.readLoop(k.shell, "shell", k.onShell)
	go k.readLoop(k.control, "control", k.onControl)
	go k.readLoop(k.stdin, "stdin", k.onStdin)
	select {
	case <-ctx.Done():
		k.log.Info("context cancelled; shutting down")
		k.shutdown(nil, false)
	case <-k.exited:
	}
	<-k.exited
	k.readers.Wait()
	k.log.Info("kernel stopped")
	return nil
}

// shutdown stops the kernel once: it cancels the running cell, waits for the
// shell worker, shuts the executor down, answers req (a shutdown_request on
// control, nil when the context ended), flushes iopub and closes the sockets.
func (k *kernel) shutdown(req *Message, restart bool) {
	k.once.Do(func() {
		k.flushing.Store(true)
		close(k.stopping)
		k.interrupt()
		select {
		case <-k.shellDone:
		case <-time.After(shellStopTimeout):
			k.log.Warn("running cell did not return after cancellation; shutting down anyway")
		}
		if err := k.exec.Shutdown(restart); err != nil {
			k.log.Warn("executor shutdown", "err", err)
		}
		if req != nil {
			content := shutdownReply{Status: "ok", Restart: restart}
			k.reply(k.control, *req, "shutdown_reply", content)
			k.publish(req.Header, "shutdown_reply", content)
			k.publish(req.Header, "status", statusContent{"idle"})
		}
		k.outMu.Lock()
		k.outClosed = true
		close(k.out)
		k.outMu.Unlock()
		<-k.outDone
		k.closing.Store(true)
		k.closeSockets()
		k.cancel()
		close(k.exited)
	})
}

func (k *kernel) closeSockets() {
	for _, s := range []zmq4.Socket{k.shell, k.control, k.stdin, k.iopub, k.hb} {
		if s != nil {
			s.Close()
		}
	}
}

// readLoop receives, verifies and decodes messages of one ROUTER socket and
// hands them to handle. Bad messages are dropped with a log line.
func (k *kernel) readLoop(s zmq4.Socket, name string, handle func(Message)) {
	defer k.readers.Done()
	for {
		zm, err := s.Recv()
		if err != nil {
			if k.closing.Load() {
				return
			}
			k.log.Warn("receive failed", "socket", name, "err", err)
			continue
		}
		msg, err := Decode(zm.Frames, k.key)
		if err != nil {
			k.log.Warn("dropping message", "socket", name, "err", err, "frames", len(zm.Frames))
			continue
		}
		k.log.Debug("received", "socket", name, "msg_type", msg.Header.MsgType, "msg_id", msg.Header.MsgID)
		handle(msg)
	}
}

func (k *kernel) heartbeat() {
	for {
		m, err := k.hb.Recv()
		if err != nil {
			if k.closing.Load() || k.ctx.Err() != nil {
				return
			}
			k.log.Warn("heartbeat receive failed", "err", err)
			continue
		}
		if err := k.hb.Send(m); err != nil && !k.closing.Load() {
			k.log.Warn("heartbeat send failed", "err", err)
		}
	}
}

// onShell queues a shell request for the shell worker.
func (k *kernel) onShell(msg Message) {
	select {
	case k.shellQ <- queued{msg, k.arrived.Add(1)}:
	case <-k.stopping:
		return
	}
	if k.onQueued != nil {
		k.onQueued()
	}
}

// shellWorker serves shell requests one at a time, in order.
func (k *kernel) shellWorker() {
	defer close(k.shellDone)
	for {
		select {
		case <-k.stopping:
			return
		case q := <-k.shellQ:
			select {
			case <-k.stopping: // select picks at random when both are ready
				return
			default:
			}
			k.serveRequest(k.shell, q.msg, q.seq)
		}
	}
}

// serveRequest runs one shell (or non-control-specific control) request
// between status busy and status idle.
func (k *kernel) serveRequest(sock zmq4.Socket, msg Message, seq uint64) {
	k.publish(msg.Header, "status", statusContent{"busy"})
	defer k.publish(msg.Header, "status", statusContent{"idle"})
	defer func() {
		if r := recover(); r != nil {
			k.log.Error("request handler panicked", "msg_type", msg.Header.MsgType, "panic", r, "stack", string(debug.Stack()))
			k.replyError(sock, msg, fmt.Errorf("internal error: %v", r))
		}
	}()
	switch msg.Header.MsgType {
	case "kernel_info_request":
		k.reply(sock, msg, "kernel_info_reply", k.kernelInfo())
	case "execute_request":
		k.execute(sock, msg, seq <= k.abortUpTo)
	case "complete_request":
		k.complete(sock, msg)
	case "inspect_request":
		k.inspect(sock, msg)
	case "is_complete_request":
		k.isComplete(sock, msg)
	case "history_request":
		var req historyRequest
		if err := decodeContent(msg, &req); err != nil {
			k.replyError(sock, msg, err)
			return
		}
		k.reply(sock, msg, "history_reply", historyReply{Status: "ok", History: history(k.hist, req)})
	case "comm_info_request":
		k.reply(sock, msg, "comm_info_reply", commInfoReply{Status: "ok", Comms: map[string]any{}})
	case "comm_open":
		// No comm targets are registered: close the comm at once, as the
		// spec asks of a kernel that does not know the target.
		var req commOpen
		if err := decodeContent(msg, &req); err != nil {
			k.log.Warn("bad comm_open", "err", err)
			return
		}
		k.log.Info("no comm target; closing comm", "target_name", req.TargetName, "comm_id", req.CommID)
		k.publish(msg.Header, "comm_close", commClose{CommID: req.CommID, Data: map[string]any{}})
	case "comm_msg", "comm_close":
		k.log.Debug("ignoring message for an unknown comm", "msg_type", msg.Header.MsgType)
	default:
		k.unknown(sock, msg)
	}
}

// onControl serves a control request at once, also while a cell runs.
func (k *kernel) onControl(msg Message) {
	switch msg.Header.MsgType {
	case "interrupt_request":
		k.publish(msg.Header, "status", statusContent{"busy"})
		k.log.Info("interrupt requested")
		k.interrupt()
		k.reply(k.control, msg, "interrupt_reply", map[string]any{"status": "ok"})
		k.publish(msg.Header, "status", statusContent{"idle"})
	case "shutdown_request":
		var req shutdownRequest
		if err := decodeContent(msg, &req); err != nil {
			k.log.Warn("bad shutdown_request; shutting down without restart", "err", err)
		}
		k.publish(msg.Header, "status", statusContent{"busy"})
		k.log.Info("shutdown requested", "restart", req.Restart)
		k.shutdown(&msg, req.Restart)
	case "kernel_info_request":
		k.serveRequest(k.control, msg, 0)
	default:
		// Other shell requests on control would run the executor
		// concurrently with the shell worker; answer them as unknown.
		k.publish(msg.Header, "status", statusContent{"busy"})
		k.unknown(k.control, msg)
		k.publish(msg.Header, "status", statusContent{"idle"})
	}
}

// onStdin handles messages on stdin. The kernel never sends input_request
// (cells do not read input), so an input_reply is unexpected and ignored.
func (k *kernel) onStdin(msg Message) {
	if msg.Header.MsgType == "input_reply" {
		k.log.Info("ignoring input_reply: the kernel requested no input", "msg_id", msg.Header.MsgID)
		return
	}
	k.unknown(k.stdin, msg)
}

// unknown answers a request of a type the kernel does not serve with an
// error reply of the matching type, so that a waiting client is not left
// hanging; other messages are logged and ignored.
func (k *kernel) unknown(sock zmq4.Socket, msg Message) {
	t := msg.Header.MsgType
	base, ok := strings.CutSuffix(t, "_request")
	if !ok {
		k.log.Info("ignoring message of unknown type", "msg_type", t)
		return
	}
	k.log.Info("unknown request type; replying with an error", "msg_type", t)
	k.reply(sock, msg, base+"_reply", errorReply{
		Status: "error", EName: "UnknownMessageType",
		EValue: fmt.Sprintf("tracebook does not handle %s", t), Traceback: []string{},
	})
}

func (k *kernel) kernelInfo() kernelInfoReply {
	links := k.info.HelpLinks
	if links == nil {
		links = []HelpLink{}
	}
	return kernelInfoReply{
		Status:                "ok",
		ProtocolVersion:       ProtocolVersion,
		Implementation:        k.info.Implementation,
		ImplementationVersion: k.info.ImplementationVersion,
		LanguageInfo: languageInfo{
			Name:           k.info.LanguageName,
			Version:        k.info.LanguageVersion,
			MimeType:       k.info.MimeType,
			FileExtension:  k.info.FileExtension,
			PygmentsLexer:  k.info.PygmentsLexer,
			CodemirrorMode: k.info.CodemirrorMode,
		},
		Banner:    k.info.Banner,
		HelpLinks: links,
	}
}

// interrupt cancels the running Execute, if any; with none running, it
// interrupts the executor's work between cells (IdleInterrupter).
func (k *kernel) interrupt() {
	k.mu.Lock()
	running := k.cancelExec != nil
	if running {
		k.cancelExec()
	}
	k.mu.Unlock()
	if ii, ok := k.exec.(IdleInterrupter); ok && !running {
		ii.InterruptIdle()
	}
}

// execute serves execute_request.
//
// Spec: https://jupyter-client.readthedocs.io/en/latest/messaging.html#execute
//
// With stop_on_error, a failed cell aborts the execute requests that were
// already queued when it failed (they were sent before the client could see
// the error); requests that arrive later run.
func (k *kernel) execute(sock zmq4.Socket, msg Message, abort bool) {
	var req executeRequest
	if err := decodeContent(msg, &req); err != nil {
		k.replyError(sock, msg, err)
		return
	}
	if abort {
		k.reply(sock, msg, "execute_reply", executeReply{
			Status: "aborted", ExecutionCount: k.count, UserExpressions: map[string]any{}, Payload: []any{},
		})
		return
	}
	store := (req.StoreHistory == nil || *req.StoreHistory) && !req.Silent
	stopOnError := req.StopOnError == nil || *req.StopOnError
	if store {
		k.count++
		k.hist = append(k.hist, historyEntry{line: k.count, input: req.Code})
	}
	n := k.count
	if !req.Silent {
		k.publish(msg.Header, "execute_input", executeInput{Code: req.Code, ExecutionCount: n})
	}
	pub := &publisher{k: k, parent: msg.Header, silent: req.Silent}
	res, err := k.run(req.Code, pub)
	if err != nil {
		ee := err.(*ExecError)
		if stopOnError && !req.Silent {
			k.abortUpTo = k.arrived.Load()
		}
		if !req.Silent {
			k.publish(msg.Header, "error", errorReply{EName: ee.EName, EValue: ee.EValue, Traceback: ee.Traceback})
		}
		k.reply(sock, msg, "execute_reply", errorReply{
			Status: "error", ExecutionCount: &n, EName: ee.EName, EValue: ee.EValue, Traceback: ee.Traceback,
		})
		return
	}
	if res != nil && !req.Silent {
		k.publish(msg.Header, "execute_result", displayContent{
			ExecutionCount: &n, Data: nonNil(res.Data), Metadata: nonNil(res.Metadata),
		})
	}
	ue := map[string]any{}
	for name, expr := range req.UserExpressions {
		r, err := k.run(expr, &publisher{k: k, parent: msg.Header, silent: true})
		if err != nil {
			ee := err.(*ExecError)
			ue[name] = errorReply{Status: "error", EName: ee.EName, EValue: ee.EValue, Traceback: ee.Traceback}
			continue
		}
		v := map[string]any{"status": "ok", "data": map[string]any{}, "metadata": map[string]any{}}
		if r != nil {
			v["data"], v["metadata"] = nonNil(r.Data), nonNil(r.Metadata)
		}
		ue[name] = v
	}
	k.reply(sock, msg, "execute_reply", executeReply{
		Status: "ok", ExecutionCount: n, UserExpressions: ue, Payload: []any{},
	})
}

// run calls Execute with a context that interrupt cancels. Any error comes
// back as an *ExecError: an interrupt as KeyboardInterrupt, a panic of the
// executor as an error with its stack, other errors with EName "Error".
func (k *kernel) run(code string, pub *publisher) (res *Result, err error) {
	ctx, cancel := context.WithCancel(k.ctx)
	k.mu.Lock()
	k.cancelExec = cancel
	select {
	case <-k.stopping: // shutdown began after the request was taken
		cancel()
	default:
	}
	k.mu.Unlock()
	defer func() {
		k.mu.Lock()
		k.cancelExec = nil
		k.mu.Unlock()
		pub.done.Store(true)
		interrupted := ctx.Err() != nil
		cancel()
		if r := recover(); r != nil {
			k.log.Error("executor panicked", "panic", r)
			res, err = nil, &ExecError{EName: "panic", EValue: fmt.Sprint(r), Traceback: strings.Split(string(debug.Stack()), "\n")}
			return
		}
		if err == nil {
			return
		}
		var ee *ExecError
		switch {
		case errors.As(err, &ee):
			e := *ee
			if e.Traceback == nil {
				e.Traceback = []string{}
			}
			err = &e
		case interrupted && errors.Is(err, context.Canceled):
			err = &ExecError{EName: "KeyboardInterrupt", EValue: "execution interrupted", Traceback: []string{}}
		default:
			err = &ExecError{EName: "Error", EValue: err.Error(), Traceback: []string{}}
		}
		res = nil
	}()
	return k.exec.Execute(ctx, code, pub)
}

func (k *kernel) complete(sock zmq4.Socket, msg Message) {
	var req completeRequest
	if err := decodeContent(msg, &req); err != nil {
		k.replyError(sock, msg, err)
		return
	}
	n := utf8.RuneCountInString(req.Code)
	cur := clampCursor(req.CursorPos, n)
	matches, start, end := k.exec.Complete(req.Code, cur)
	if matches == nil {
		matches = []string{}
	}
	start, end = max(0, min(start, n)), max(0, min(end, n))
	if start > end {
		start = end
	}
	k.reply(sock, msg, "complete_reply", completeReply{
		Status: "ok", Matches: matches, CursorStart: start, CursorEnd: end, Metadata: map[string]any{},
	})
}

func (k *kernel) inspect(sock zmq4.Socket, msg Message) {
	var req inspectRequest
	if err := decodeContent(msg, &req); err != nil {
		k.replyError(sock, msg, err)
		return
	}
	cur := clampCursor(req.CursorPos, utf8.RuneCountInString(req.Code))
	data, found := k.exec.Inspect(req.Code, cur, req.DetailLevel)
	k.reply(sock, msg, "inspect_reply", inspectReply{
		Status: "ok", Found: found, Data: nonNil(data), Metadata: map[string]any{},
	})
}

func (k *kernel) isComplete(sock zmq4.Socket, msg Message) {
	var req isCompleteRequest
	if err := decodeContent(msg, &req); err != nil {
		k.replyError(sock, msg, err)
		return
	}
	status, indent := k.exec.IsComplete(req.Code)
	r := isCompleteReply{Status: status}
	switch status {
	case "incomplete":
		r.Indent = &indent
	case "complete", "invalid", "unknown":
	default:
		r.Status = "unknown"
	}
	k.reply(sock, msg, "is_complete_reply", r)
}

// clampCursor returns the cursor position within [0, n]; nil means n.
func clampCursor(pos *int, n int) int {
	if pos == nil {
		return n
	}
	return max(0, min(*pos, n))
}

func nonNil(m map[string]any) map[string]any {
	if m == nil {
		return map[string]any{}
	}
	return m
}

// replyError answers msg with status "error" in the reply type matching its
// request type.
func (k *kernel) replyError(sock zmq4.Socket, msg Message, err error) {
	k.log.Warn("request failed", "msg_type", msg.Header.MsgType, "err", err)
	base, _ := strings.CutSuffix(msg.Header.MsgType, "_request")
	k.reply(sock, msg, base+"_reply", errorReply{
		Status: "error", EName: "BadRequest", EValue: err.Error(), Traceback: []string{},
	})
}

// newMessage builds a message of the kernel's session, parented to parent.
func (k *kernel) newMessage(msgType string, parent Header, content any) (Message, error) {
	b, err := json.Marshal(content)
	if err != nil {
		return Message{}, fmt.Errorf("encode %s content: %w", msgType, err)
	}
	return Message{
		Header: Header{
			MsgID:    newID(),
			Session:  k.session,
			Username: "tracebook",
			Date:     time.Now().UTC().Format("2006-01-02T15:04:05.000000Z"),
			MsgType:  msgType,
			Version:  ProtocolVersion,
		},
		Parent:  parent,
		Content: b,
	}, nil
}

// reply sends a reply to the identities of req on sock. zmq4 drops a reply
// whose identity has no connection (the client left) without an error.
func (k *kernel) reply(sock zmq4.Socket, req Message, msgType string, content any) {
	msg, err := k.newMessage(msgType, req.Header, content)
	if err != nil {
		// Content JSON cannot hold (NaN, say): still answer, so that the
		// client does not wait forever.
		k.log.Error("reply", "err", err)
		if msg, err = k.newMessage(msgType, req.Header, errorReply{
			Status: "error", EName: "EncodingError", EValue: err.Error(), Traceback: []string{},
		}); err != nil {
			return
		}
	}
	msg.Identities = req.Identities
	frames, err := Encode(msg, k.key)
	if err != nil {
		k.log.Error("reply", "msg_type", msgType, "err", err)
		return
	}
	if len(req.Identities) == 0 {
		k.log.Warn("request without identity; cannot reply", "msg_type", msgType)
		return
	}
	if err := sock.SendMulti(zmq4.NewMsgFrom(frames...)); err != nil {
		k.log.Warn("send reply", "msg_type", msgType, "err", err)
	}
}

// publish queues an iopub message of the kernel's own (status,
// execute_input, execute_result, error, ...). When the queue is full it
// waits for room: that happens only while a subscriber stalls, for at most
// writeTimeout, and it keeps the busy/idle protocol whole. Cells' outputs go
// through publishOutput instead.
func (k *kernel) publish(parent Header, msgType string, content any) {
	k.enqueue(parent, msgType, content, false)
}

// publishOutput queues an output of a cell. It never blocks: when the queue
// is full the output is dropped with a log line (at most one a second).
func (k *kernel) publishOutput(parent Header, msgType string, content any) {
	k.enqueue(parent, msgType, content, true)
}

func (k *kernel) enqueue(parent Header, msgType string, content any, droppable bool) {
	msg, err := k.newMessage(msgType, parent, content)
	if err != nil {
		// An output JSON cannot hold (NaN, say): tell the user instead.
		k.log.Error("publish", "err", err)
		if msgType == "stream" {
			return
		}
		text := fmt.Sprintf("tracebook: cannot send the %s output: %v\n", msgType, err)
		if msg, err = k.newMessage("stream", parent, streamContent{Name: "stderr", Text: text}); err != nil {
			return
		}
		msgType = "stream"
	}
	msg.Identities = [][]byte{[]byte("kernel." + k.session + "." + msgType)}
	frames, err := Encode(msg, k.key)
	if err != nil {
		k.log.Error("publish", "msg_type", msgType, "err", err)
		return
	}
	m := outMsg{frames: frames, id: msg.Header.MsgID}
	k.outMu.RLock()
	defer k.outMu.RUnlock()
	if k.outClosed {
		k.log.Debug("iopub closed; dropping message", "msg_type", msgType)
		return
	}
	if !droppable {
		k.out <- m // the sender never stops draining while out is open
		return
	}
	select {
	case k.out <- m:
	default:
		n := k.dropped.Add(1)
		now := time.Now().UnixNano()
		if last := k.lastDrop.Load(); now-last > int64(time.Second) && k.lastDrop.CompareAndSwap(last, now) {
			k.log.Warn("iopub queue full; dropping output", "msg_type", msgType, "dropped_total", n)
		}
	}
}

// stallThreshold is how long a write to a subscriber may last before the
// sender stops handing messages to zmq4.
func stallThreshold() time.Duration { return writeTimeout / 5 }

// sendLoop hands queued iopub messages to the PUB socket. Once shutdown
// has begun it watches each message go out, and at exit it waits until the
// last one has been written to every subscriber.
//
// Until a first client has subscribed to iopub, or subscriberWait after the
// start, messages wait: a client that starts the kernel connects its
// sockets on its own timers, and PUB drops what it sends before the
// subscription arrives. jupyter console sends execute_request as soon as
// kernel_info_reply came, and without this would miss the busy/idle of its
// first cell and wait for them forever.
func (k *kernel) sendLoop() {
	defer close(k.outDone)
	var waits []chan struct{}
	subscribed := false
	deadline := time.Now().Add(subscriberWait)
	for m := range k.out {
		if !subscribed {
			k.waitSubscriber(deadline)
			subscribed = true
		}
		if k.iopubL != nil {
			// zmq4 queues without bound behind a stalled subscriber and drops
			// silently at its high-water mark; hold messages here instead, so
			// that the bounded queue is the one that fills, drops outputs and
			// says so.
			k.iopubL.waitUnstalled(stallThreshold())
			if k.flushing.Load() {
				// Watch before sending: zmq4 may write it at once.
				waits = k.iopubL.watchAll([]byte(m.id), wireTail(m.frames))
			}
		}
		if err := k.iopub.SendMulti(zmq4.NewMsgFrom(m.frames...)); err != nil {
			k.log.Warn("iopub send", "err", err)
		}
	}
	if !waitAll(waits, flushTimeout) {
		k.log.Warn("iopub not flushed to every subscriber before exit", "timeout", flushTimeout)
	}
}

// waitSubscriber returns once iopub has a subscription, at deadline, or
// at shutdown. It checks every 5ms, only while a message waits before the
// first subscriber came.
func (k *kernel) waitSubscriber(deadline time.Time) {
	t, ok := k.iopub.(zmq4.Topics)
	if !ok {
		return
	}
	for len(t.Topics()) == 0 && time.Now().Before(deadline) {
		select {
		case <-k.ctx.Done():
			return
		case <-time.After(5 * time.Millisecond):
		}
	}
}

// wireTail is the ZMTP size of the frames after the header frame of an
// iopub message (parent header, metadata, content): each frame has a 2-byte
// header, or 9 bytes when longer than 255.
func wireTail(frames [][]byte) int {
	tail := 0
	for _, f := range frames[len(frames)-3:] {
		tail += len(f) + 2
		if len(f) > 255 {
			tail += 7
		}
	}
	return tail
}

// publisher is the Publisher of one request.
type publisher struct {
	k        *kernel
	parent   Header
	silent   bool
	done     atomic.Bool
	detached atomic.Bool
}

// Detach lets the request's outputs outlive it: once Execute has returned
// they are still sent, parented to the request, instead of dropped. A cell
// that leaves work running (a background load updating its progress
// display) calls it; Jupyter front ends apply a display update wherever
// that display is.
func (p *publisher) Detach() { p.detached.Store(true) }

func (p *publisher) off(what string) bool {
	if p.silent {
		return true
	}
	if p.done.Load() && !p.detached.Load() {
		p.k.log.Warn("output after the cell returned; dropped", "kind", what, "parent", p.parent.MsgID)
		return true
	}
	return false
}

func (p *publisher) Stream(name, text string) {
	if p.off("stream") {
		return
	}
	p.k.publishOutput(p.parent, "stream", streamContent{Name: name, Text: text})
}

func (p *publisher) Display(data, metadata map[string]any, displayID string) {
	if p.off("display_data") {
		return
	}
	p.k.publishOutput(p.parent, "display_data", displayContent{Data: nonNil(data), Metadata: nonNil(metadata), Transient: transient(displayID)})
}

func (p *publisher) UpdateDisplay(data, metadata map[string]any, displayID string) {
	if p.off("update_display_data") {
		return
	}
	p.k.publishOutput(p.parent, "update_display_data", displayContent{Data: nonNil(data), Metadata: nonNil(metadata), Transient: transient(displayID)})
}

func (p *publisher) ClearOutput(wait bool) {
	if p.off("clear_output") {
		return
	}
	p.k.publishOutput(p.parent, "clear_output", clearOutput{Wait: wait})
}

func transient(displayID string) map[string]any {
	if displayID == "" {
		return nil
	}
	return map[string]any{"display_id": displayID}
}

// newID returns a random UUID (version 4) string.
func newID() string {
	var b [16]byte
	rand.Read(b[:])
	b[6] = b[6]&0x0f | 0x40
	b[8] = b[8]&0x3f | 0x80
	return fmt.Sprintf("%x-%x-%x-%x-%x", b[0:4], b[4:6], b[6:8], b[8:10], b[10:])
}
