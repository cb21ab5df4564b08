package kernel

import (
	"bytes"
	"context"
	"encoding/binary"
	"errors"
	"fmt"
	"io"
	"log/slog"
	"net"
	"sync"
	"sync/atomic"
	"time"

	"github.com/go-zeromq/zmq4"
	"github.com/go-zeromq/zmq4/transport"
)

// guardScheme is the zmq4 transport name under which the kernel binds its
// sockets: plain TCP with the guards below. Clients connect with tcp://.
const guardScheme = "tbtcp"

// Limits of the guarded transport. They are variables so that tests can
// shorten them; Run never changes them.
var (
	// handshakeTimeout bounds the ZMTP handshake of an accepted peer: its
	// signature must arrive before the connection reaches zmq4, and its
	// greeting and READY command within this time.
	handshakeTimeout = 10 * time.Second
	// writeTimeout bounds one write to a peer. A peer that stops reading is
	// disconnected after it, so that it cannot stall the others.
	writeTimeout = 10 * time.Second
	// maxFrameSize is the largest ZMTP frame accepted from a peer.
	maxFrameSize uint64 = 256 << 20
	// maxPendingHandshakes bounds the connections waiting for their signature.
	maxPendingHandshakes = 64
)

var registerOnce sync.Once

// registerGuard registers the guarded transport with zmq4 once per process.
func registerGuard() {
	registerOnce.Do(func() {
		if err := zmq4.RegisterTransport(guardScheme, guardTransport{}); err != nil {
			panic(err) // only a second registration fails, and Once prevents it
		}
	})
}

// guardTransport is TCP with guards against three faults of zmq4 v0.17.0:
//
//   - zmq4 runs the ZMTP handshake inside its accept loop with no deadline,
//     so one TCP peer that connects and sends nothing blocks every later
//     connection. Here each accepted connection first has to deliver the
//     10-byte ZMTP signature, read on its own goroutine under
//     handshakeTimeout; only then does zmq4 see it. The rest of the handshake
//     (greeting and READY) is also bounded by handshakeTimeout, counted from
//     when zmq4 takes the connection.
//   - zmq4 writes to subscribers one after the other on one goroutine, and a
//     write to a peer that stopped reading never returns: one stalled iopub
//     subscriber stops iopub for everyone, and a stalled shell client stops
//     every reply. Here every write has a deadline (writeTimeout); when it
//     passes, the peer is disconnected with a log line.
//   - zmq4 allocates a frame's body from the size the peer announces. Here
//     a frame larger than maxFrameSize disconnects the peer instead.
//
// It also sends each message in one write instead of zmq4's two per frame
// (see guardConn.Write), and lets the kernel learn when a given iopub
// message has been written to every subscriber (watchAll) and whether a
// subscriber stalls (waitUnstalled), which zmq4 has no API for.
type guardTransport struct{}

func (guardTransport) Dial(ctx context.Context, d transport.Dialer, addr string) (net.Conn, error) {
	return d.DialContext(ctx, "tcp", addr)
}

func (guardTransport) Listen(ctx context.Context, addr string) (net.Listener, error) {
	inner, err := net.Listen("tcp", addr)
	if err != nil {
		return nil, err
	}
	l := &guardListener{
		Listener: inner,
		ready:    make(chan net.Conn),
		done:     make(chan struct{}),
		slots:    make(chan struct{}, maxPendingHandshakes),
		conns:    make(map[*guardConn]struct{}),
		log:      transportLog(),
		hsTime:   handshakeTimeout,
		wrTime:   writeTimeout,
		maxFrame: maxFrameSize,
	}
	listeners.Store(inner.Addr().String(), l)
	go l.acceptLoop()
	return l, nil
}

func (guardTransport) Addr(ep string) (string, error) {
	host, port, err := net.SplitHostPort(ep)
	if err != nil {
		return "", err
	}
	switch port {
	case "", "*":
		port = "0"
	}
	switch host {
	case "", "*":
		host = "0.0.0.0"
	}
	return net.JoinHostPort(host, port), nil
}

// listeners maps a bound address to its guardListener, so that the kernel
// that bound it can find it (zmq4 hides its listener behind net.Listener).
var listeners sync.Map

// guardLog is the logger of the guarded transport: the one given to the
// most recently started kernel (a process runs one kernel; tests run them one
// after the other).
var guardLog atomic.Pointer[slog.Logger]

func transportLog() *slog.Logger {
	if l := guardLog.Load(); l != nil {
		return l
	}
	return slog.New(slog.DiscardHandler)
}

// guardListener screens accepted connections before zmq4 sees them.
type guardListener struct {
	net.Listener
	ready    chan net.Conn
	done     chan struct{}
	once     sync.Once
	slots    chan struct{}
	log      *slog.Logger
	hsTime   time.Duration
	wrTime   time.Duration
	maxFrame uint64

	mu    sync.Mutex
	conns map[*guardConn]struct{}
}

// Accept returns the next connection that sent a ZMTP signature.
func (l *guardListener) Accept() (net.Conn, error) {
	select {
	case c := <-l.ready:
		// zmq4 runs one handshake at a time: the deadline of the rest of
		// the handshake starts now, so that a peer queued behind a stalled
		// one keeps its whole time instead of expiring with it.
		c.SetReadDeadline(time.Now().Add(l.hsTime))
		return c, nil
	case <-l.done:
		return nil, net.ErrClosed
	}
}

func (l *guardListener) Close() error {
	l.once.Do(func() { close(l.done) })
	listeners.CompareAndDelete(l.Listener.Addr().String(), l)
	err := l.Listener.Close()
	l.mu.Lock()
	for c := range l.conns {
		c.Conn.Close()
	}
	l.mu.Unlock()
	return err
}

func (l *guardListener) acceptLoop() {
	backoff := time.Millisecond
	for {
		c, err := l.Listener.Accept()
		if err != nil {
			select {
			case <-l.done:
				return
			default:
			}
			if errors.Is(err, net.ErrClosed) {
				return
			}
			// Out of file descriptors and the like: wait, then retry.
			l.log.Warn("accept failed", "err", err)
			time.Sleep(backoff)
			backoff = min(2*backoff, time.Second)
			continue
		}
		backoff = time.Millisecond
		select {
		case l.slots <- struct{}{}:
			go l.screen(c)
		default:
			l.log.Warn("too many connections in handshake; closing", "peer", c.RemoteAddr().String())
			c.Close()
		}
	}
}

// screen reads the ZMTP signature under a deadline and hands the connection
// to zmq4's accept loop.
func (l *guardListener) screen(c net.Conn) {
	defer func() { <-l.slots }()
	var sig [10]byte
	c.SetReadDeadline(time.Now().Add(l.hsTime))
	if _, err := io.ReadFull(c, sig[:]); err != nil || sig[0] != 0xff || sig[9] != 0x7f {
		l.log.Warn("peer sent no ZMTP signature; closing", "peer", c.RemoteAddr().String(), "err", err)
		c.Close()
		return
	}
	g := &guardConn{Conn: c, l: l, pre: sig[:], greetLeft: 64, wGreetLeft: 64}
	l.mu.Lock()
	l.conns[g] = struct{}{}
	l.mu.Unlock()
	select {
	case l.ready <- g:
	case <-l.done:
		g.Close()
	}
}

// watchAll arranges to learn when every active connection (handshake done,
// a first message received: for iopub, a subscriber) has written a buffer
// containing token followed by tail more bytes, or has closed. The kernel
// calls it before handing a message to zmq4, with the header frame's unique
// msg_id as token and the wire size of the frames after it as tail, so that
// it knows when the whole message went out. Each connection follows one
// token at a time: a later call replaces the watch of an earlier one.
func (l *guardListener) watchAll(token []byte, tail int) []chan struct{} {
	l.mu.Lock()
	defer l.mu.Unlock()
	var waits []chan struct{}
	for c := range l.conns {
		if c.active.Load() {
			waits = append(waits, c.watch(token, tail))
		}
	}
	return waits
}

// waitAll waits until every channel is closed or timeout passed, and
// reports whether all were closed.
func waitAll(waits []chan struct{}, timeout time.Duration) bool {
	t := time.NewTimer(timeout)
	defer t.Stop()
	for _, w := range waits {
		select {
		case <-w:
		case <-t.C:
			return false
		}
	}
	return true
}

// activeConns counts the connections that completed the handshake and sent
// a first message.
func (l *guardListener) activeConns() int {
	l.mu.Lock()
	defer l.mu.Unlock()
	n := 0
	for c := range l.conns {
		if c.active.Load() {
			n++
		}
	}
	return n
}

// waitUnstalled returns once no write to any connection has been in
// progress for longer than threshold. It checks every 10ms, and only while a
// write is stalled: an idle or healthy kernel does not poll.
func (l *guardListener) waitUnstalled(threshold time.Duration) {
	logged := false
	for {
		oldest := int64(0)
		l.mu.Lock()
		for c := range l.conns {
			if s := c.writeStart.Load(); s != 0 && (oldest == 0 || s < oldest) {
				oldest = s
			}
		}
		l.mu.Unlock()
		if oldest == 0 || time.Since(time.Unix(0, oldest)) < threshold {
			return
		}
		if !logged {
			l.log.Warn("a subscriber stopped reading; holding iopub messages until it reads or is disconnected", "timeout", l.wrTime)
			logged = true
		}
		select {
		case <-l.done:
			return
		case <-time.After(10 * time.Millisecond):
		}
	}
}

// guardConn is an accepted connection: it replays the screened signature,
// follows the peer's ZMTP framing to bound the handshake and frame sizes, and
// puts a deadline on every write.
type guardConn struct {
	net.Conn
	l      *guardListener
	pre    []byte
	closed atomic.Bool
	active atomic.Bool // handshake done and a first message received

	// Read side, used only by zmq4's single reader of this connection.
	greetLeft int // greeting bytes still to come
	hdr       [9]byte
	hdrHave   int
	bodyLeft  uint64
	inBody    bool
	frames    int

	// Write side, used by one writer at a time (zmq4 serialises writes).
	wbuf       []byte // coalesced writes not yet sent
	wGreetLeft int    // greeting bytes still to be written
	wHdr       [9]byte
	wHdrHave   int
	wBodyLeft  uint64
	wInBody    bool
	wLast      bool         // the current frame ends a message or is a command
	writeStart atomic.Int64 // unix nanoseconds when the write in progress began; 0 when none
	wmu        sync.Mutex
	deadline   time.Time
	watchMu    sync.Mutex
	watchTok   []byte
	watchTail  int // bytes to write after the token
	watchLeft  int // bytes still to write once the token was seen
	watchSeen  bool
	watchCh    chan struct{}
}

// errPeerStalled is returned for a write that passed its deadline. It is a
// net.Error that is not a timeout, so that zmq4 drops the connection (it
// keeps connections whose errors are timeouts).
type errPeerStalled struct{}

func (errPeerStalled) Error() string   { return "peer stopped reading; disconnected" }
func (errPeerStalled) Timeout() bool   { return false }
func (errPeerStalled) Temporary() bool { return false }

// errPeerBroken is a read error that zmq4 must treat as fatal.
type errPeerBroken struct{ msg string }

func (e errPeerBroken) Error() string { return e.msg }
func (errPeerBroken) Timeout() bool   { return false }
func (errPeerBroken) Temporary() bool { return false }
func (e errPeerBroken) Unwrap() error { return io.EOF }

func (c *guardConn) Read(p []byte) (int, error) {
	var n int
	var err error
	if len(c.pre) > 0 {
		n = copy(p, c.pre)
		c.pre = c.pre[n:]
	} else {
		n, err = c.Conn.Read(p)
	}
	if ferr := c.follow(p[:n]); ferr != nil {
		c.l.log.Warn("closing peer", "peer", c.RemoteAddr().String(), "err", ferr)
		c.Close()
		return 0, errPeerBroken{ferr.Error()}
	}
	if err != nil {
		var ne net.Error
		if errors.As(err, &ne) && ne.Timeout() {
			c.l.log.Warn("peer did not complete the ZMTP handshake in time; closing", "peer", c.RemoteAddr().String())
			c.Close()
			return n, errPeerBroken{"handshake timeout"}
		}
	}
	return n, err
}

// follow advances the ZMTP frame tracker over bytes the peer sent
// (https://rfc.zeromq.org/spec/23/: a 64-byte greeting, then frames of a
// flags byte, a 1- or 8-byte size and a body). The first frame after the
// greeting is the READY command that ends the NULL handshake; after it the
// read deadline is lifted.
func (c *guardConn) follow(b []byte) error {
	for len(b) > 0 {
		switch {
		case c.greetLeft > 0:
			k := min(c.greetLeft, len(b))
			c.greetLeft -= k
			b = b[k:]
		case c.inBody:
			k := uint64(len(b))
			if k > c.bodyLeft {
				k = c.bodyLeft
			}
			c.bodyLeft -= k
			b = b[k:]
			if c.bodyLeft == 0 {
				c.frameDone()
			}
		default:
			c.hdr[c.hdrHave] = b[0]
			c.hdrHave++
			b = b[1:]
			need := 2
			if c.hdr[0]&0x02 != 0 {
				need = 9
			}
			if c.hdrHave < need {
				continue
			}
			size := uint64(c.hdr[1])
			if need == 9 {
				size = binary.BigEndian.Uint64(c.hdr[1:9])
			}
			c.hdrHave = 0
			if size > c.l.maxFrame {
				return fmt.Errorf("frame of %d bytes exceeds the limit of %d", size, c.l.maxFrame)
			}
			c.bodyLeft = size
			c.inBody = size > 0
			if size == 0 {
				c.frameDone()
			}
		}
	}
	return nil
}

func (c *guardConn) frameDone() {
	c.inBody = false
	c.frames++
	switch c.frames {
	case 1:
		c.Conn.SetReadDeadline(time.Time{})
	case 2:
		c.active.Store(true)
	}
}

// Write coalesces zmq4's writes into one per message. zmq4 writes a
// frame's header and body separately, and net.Buffers cannot reach the
// socket's writev through a wrapper, so a 4-frame Jupyter message would
// cost 14 syscalls and as many TCP segments. Write follows the ZMTP frames
// it is given (greeting, then frames) and sends what it holds when a
// message or command ends, or before 64 KiB would be held; larger bodies go
// straight through.
func (c *guardConn) Write(p []byte) (int, error) {
	end := c.trackWrite(p)
	if len(c.wbuf)+len(p) > writeCoalesce {
		if err := c.flush(); err != nil {
			return 0, err
		}
	}
	if len(c.wbuf) == 0 && (end || len(p) > writeCoalesce) {
		if _, err := c.rawWrite(p); err != nil {
			return 0, err
		}
	} else {
		c.wbuf = append(c.wbuf, p...)
		if end {
			if err := c.flush(); err != nil {
				return 0, err
			}
		}
	}
	c.watchMu.Lock()
	if c.watchCh != nil {
		switch {
		case !c.watchSeen && bytes.Contains(p, c.watchTok):
			c.watchSeen, c.watchLeft = true, c.watchTail
		case c.watchSeen:
			c.watchLeft -= len(p)
		}
		if c.watchSeen && c.watchLeft <= 0 && len(c.wbuf) == 0 {
			close(c.watchCh)
			c.watchCh, c.watchTok = nil, nil
		}
	}
	c.watchMu.Unlock()
	return len(p), nil
}

// writeCoalesce is the most Write holds before sending.
const writeCoalesce = 64 << 10

// trackWrite advances the ZMTP tracker of what the kernel writes and
// reports whether p ends the greeting, a command, or the last frame of a
// message: the points where the peer may be waiting for what was written.
func (c *guardConn) trackWrite(p []byte) bool {
	end := false
	for len(p) > 0 {
		switch {
		case c.wGreetLeft > 0:
			k := min(c.wGreetLeft, len(p))
			c.wGreetLeft -= k
			p = p[k:]
			end = c.wGreetLeft == 0
		case c.wInBody:
			k := uint64(len(p))
			if k > c.wBodyLeft {
				k = c.wBodyLeft
			}
			c.wBodyLeft -= k
			p = p[k:]
			if c.wBodyLeft == 0 {
				c.wInBody = false
				end = c.wLast
			}
		default:
			c.wHdr[c.wHdrHave] = p[0]
			c.wHdrHave++
			p = p[1:]
			need := 2
			if c.wHdr[0]&0x02 != 0 {
				need = 9
			}
			if c.wHdrHave < need {
				end = false
				continue
			}
			size := uint64(c.wHdr[1])
			if need == 9 {
				size = binary.BigEndian.Uint64(c.wHdr[1:9])
			}
			c.wHdrHave = 0
			c.wLast = c.wHdr[0]&0x01 == 0 || c.wHdr[0]&0x04 != 0
			c.wBodyLeft, c.wInBody = size, size > 0
			end = size == 0 && c.wLast
		}
	}
	return end
}

// flush sends what Write holds.
func (c *guardConn) flush() error {
	if len(c.wbuf) == 0 {
		return nil
	}
	_, err := c.rawWrite(c.wbuf)
	c.wbuf = c.wbuf[:0]
	if cap(c.wbuf) > writeCoalesce {
		c.wbuf = nil // do not keep a large buffer
	}
	return err
}

// rawWrite writes to the socket under the write deadline; a write that
// passes it disconnects the peer.
func (c *guardConn) rawWrite(p []byte) (int, error) {
	c.wmu.Lock()
	now := time.Now()
	// Move the deadline only when less than half of writeTimeout is left:
	// every write still gets at least half of it, for a fraction of the calls.
	if c.deadline.Sub(now) < c.l.wrTime/2 {
		c.deadline = now.Add(c.l.wrTime)
		c.Conn.SetWriteDeadline(c.deadline)
	}
	c.wmu.Unlock()
	c.writeStart.Store(now.UnixNano())
	n, err := c.Conn.Write(p)
	c.writeStart.Store(0)
	if err != nil {
		var ne net.Error
		if errors.As(err, &ne) && ne.Timeout() {
			c.l.log.Warn("peer stopped reading; disconnecting it", "peer", c.RemoteAddr().String(), "after", c.l.wrTime)
			c.Close()
			return n, errPeerStalled{}
		}
		return n, err
	}
	return n, nil
}

// watch returns a channel closed when a later write contains token and tail
// more bytes were written after it, or the connection closes.
func (c *guardConn) watch(token []byte, tail int) chan struct{} {
	ch := make(chan struct{})
	c.watchMu.Lock()
	defer c.watchMu.Unlock()
	if c.closed.Load() {
		close(ch)
		return ch
	}
	if c.watchCh != nil {
		close(c.watchCh)
	}
	c.watchTok, c.watchTail, c.watchSeen, c.watchCh = token, tail, false, ch
	return ch
}

func (c *guardConn) Close() error {
	if !c.closed.CompareAndSwap(false, true) {
		return nil
	}
	c.l.mu.Lock()
	delete(c.l.conns, c)
	c.l.mu.Unlock()
	c.watchMu.Lock()
	if c.watchCh != nil {
		close(c.watchCh)
		c.watchCh = nil
	}
	c.watchMu.Unlock()
	return c.Conn.Close()
}
