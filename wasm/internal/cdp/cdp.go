// Package cdp drives a headless Chromium through the DevTools protocol over
// a minimal WebSocket client, for the report's browser test. Only tests
// import it; it needs no dependency beyond the standard library.
package cdp

import (
	"bufio"
	"bytes"
	"context"
	"crypto/rand"
	"encoding/base64"
	"encoding/binary"
	"encoding/json"
	"errors"
	"fmt"
	"io"
	"net"
	"net/http"
	"net/url"
	"os"
	"os/exec"
	"regexp"
	"strings"
	"sync"
	"time"
)

// Browser is a running headless Chromium.
type Browser struct {
	cmd  *exec.Cmd
	port string
}

// Flags are the command-line flags the browser starts with (plus a fresh
// --user-data-dir and --remote-debugging-port=0).
var Flags = []string{"--headless", "--no-sandbox", "--disable-gpu", "--no-first-run",
	"--disable-background-networking", "--disable-component-update", "--disable-sync",
	"--disable-default-apps", "--disable-extensions", "--mute-audio"}

// Find returns the path of a Chromium binary, or "".
func Find() string {
	for _, p := range []string{"/usr/bin/chromium", "/usr/bin/chromium-browser", "/usr/bin/google-chrome"} {
		if _, err := os.Stat(p); err == nil {
			return p
		}
	}
	for _, n := range []string{"chromium", "chromium-browser", "google-chrome"} {
		if p, err := exec.LookPath(n); err == nil {
			return p
		}
	}
	return ""
}

// Start starts the browser at path with a fresh profile in dir.
func Start(ctx context.Context, path, dir string) (*Browser, error) {
	args := append(append([]string{}, Flags...), "--user-data-dir="+dir, "--remote-debugging-port=0", "about:blank")
	cmd := exec.CommandContext(ctx, path, args...)
	stderr, err := cmd.StderrPipe()
	if err != nil {
		return nil, err
	}
	if err := cmd.Start(); err != nil {
		return nil, err
	}
	re := regexp.MustCompile(`DevTools listening on ws://127\.0\.0\.1:(\d+)/`)
	found := make(chan string, 1)
	go func() {
		sc := bufio.NewScanner(stderr)
		for sc.Scan() {
			if m := re.FindStringSubmatch(sc.Text()); m != nil {
				select {
				case found <- m[1]:
				default:
				}
			}
		}
	}()
	select {
	case port := <-found:
		return &Browser{cmd: cmd, port: port}, nil
	case <-time.After(30 * time.Second):
		cmd.Process.Kill()
		cmd.Wait()
		return nil, errors.New("chromium did not print its DevTools address within 30 s")
	}
}

// Close stops the browser it started.
func (b *Browser) Close() {
	b.cmd.Process.Kill()
	b.cmd.Wait()
}

// Page connects to the first page target.
func (b *Browser) Page() (*Conn, error) {
	resp, err := http.Get("http://127.0.0.1:" + b.port + "/json/list")
	if err != nil {
		return nil, err
	}
	defer resp.Body.Close()
	var targets []struct {
		Type string `json:"type"`
		WS   string `json:"webSocketDebuggerUrl"`
	}
	if err := json.NewDecoder(resp.Body).Decode(&targets); err != nil {
		return nil, err
	}
	for _, t := range targets {
		if t.Type == "page" {
			return Dial(t.WS)
		}
	}
	return nil, errors.New("no page target")
}

// Conn is a DevTools session over one WebSocket.
type Conn struct {
	c      net.Conn
	r      *bufio.Reader
	wmu    sync.Mutex
	mu     sync.Mutex
	id     int
	wait   map[int]chan reply
	events []Event
	err    error
}

// Event is a protocol event the connection received.
type Event struct {
	Method string
	Params json.RawMessage
}

type reply struct {
	Result json.RawMessage
	Error  *struct {
		Message string `json:"message"`
	}
}

// Dial opens the WebSocket at u.
func Dial(u string) (*Conn, error) {
	pu, err := url.Parse(u)
	if err != nil {
		return nil, err
	}
	c, err := net.Dial("tcp", pu.Host)
	if err != nil {
		return nil, err
	}
	key := make([]byte, 16)
	rand.Read(key)
	fmt.Fprintf(c, "GET %s HTTP/1.1\r\nHost: %s\r\nUpgrade: websocket\r\nConnection: Upgrade\r\nSec-WebSocket-Key: %s\r\nSec-WebSocket-Version: 13\r\n\r\n",
		pu.RequestURI(), pu.Host, base64.StdEncoding.EncodeToString(key))
	r := bufio.NewReaderSize(c, 1<<16)
	resp, err := http.ReadResponse(r, nil)
	if err != nil {
		c.Close()
		return nil, err
	}
	if resp.StatusCode != http.StatusSwitchingProtocols {
		c.Close()
		return nil, fmt.Errorf("websocket upgrade: %s", resp.Status)
	}
	conn := &Conn{c: c, r: r, wait: map[int]chan reply{}}
	go conn.readLoop()
	return conn, nil
}

// Close closes the connection.
func (c *Conn) Close() error { return c.c.Close() }

func (c *Conn) readLoop() {
	for {
		msg, err := c.readMessage()
		if err != nil {
			c.mu.Lock()
			c.err = err
			for _, ch := range c.wait {
				close(ch)
			}
			c.wait = map[int]chan reply{}
			c.mu.Unlock()
			return
		}
		var m struct {
			ID     int             `json:"id"`
			Method string          `json:"method"`
			Params json.RawMessage `json:"params"`
			Result json.RawMessage `json:"result"`
			Error  *struct {
				Message string `json:"message"`
			} `json:"error"`
		}
		if json.Unmarshal(msg, &m) != nil {
			continue
		}
		c.mu.Lock()
		if m.Method != "" {
			c.events = append(c.events, Event{m.Method, m.Params})
		} else if ch, ok := c.wait[m.ID]; ok {
			ch <- reply{m.Result, m.Error}
			delete(c.wait, m.ID)
		}
		c.mu.Unlock()
	}
}

func (c *Conn) readMessage() ([]byte, error) {
	var msg []byte
	for {
		var h [2]byte
		if _, err := io.ReadFull(c.r, h[:]); err != nil {
			return nil, err
		}
		fin, op := h[0]&0x80 != 0, h[0]&0x0f
		n := uint64(h[1] & 0x7f)
		switch n {
		case 126:
			var b [2]byte
			if _, err := io.ReadFull(c.r, b[:]); err != nil {
				return nil, err
			}
			n = uint64(binary.BigEndian.Uint16(b[:]))
		case 127:
			var b [8]byte
			if _, err := io.ReadFull(c.r, b[:]); err != nil {
				return nil, err
			}
			n = binary.BigEndian.Uint64(b[:])
		}
		if h[1]&0x80 != 0 {
			var mask [4]byte
			io.ReadFull(c.r, mask[:])
		}
		payload := make([]byte, n)
		if _, err := io.ReadFull(c.r, payload); err != nil {
			return nil, err
		}
		switch op {
		case 0x8:
			return nil, io.EOF
		case 0x9, 0xA:
			continue
		}
		msg = append(msg, payload...)
		if fin {
			return msg, nil
		}
	}
}

func (c *Conn) write(p []byte) error {
	c.wmu.Lock()
	defer c.wmu.Unlock()
	var h bytes.Buffer
	h.WriteByte(0x81)
	switch {
	case len(p) < 126:
		h.WriteByte(0x80 | byte(len(p)))
	case len(p) < 1<<16:
		h.WriteByte(0x80 | 126)
		binary.Write(&h, binary.BigEndian, uint16(len(p)))
	default:
		h.WriteByte(0x80 | 127)
		binary.Write(&h, binary.BigEndian, uint64(len(p)))
	}
	var mask [4]byte
	rand.Read(mask[:])
	h.Write(mask[:])
	masked := make([]byte, len(p))
	for i := range p {
		masked[i] = p[i] ^ mask[i%4]
	}
	h.Write(masked)
	_, err := c.c.Write(h.Bytes())
	return err
}

// Call sends a command and waits for its result.
func (c *Conn) Call(ctx context.Context, method string, params any, result any) error {
	c.mu.Lock()
	if c.err != nil {
		c.mu.Unlock()
		return c.err
	}
	c.id++
	id := c.id
	ch := make(chan reply, 1)
	c.wait[id] = ch
	c.mu.Unlock()
	if params == nil {
		params = struct{}{}
	}
	msg, _ := json.Marshal(map[string]any{"id": id, "method": method, "params": params})
	if err := c.write(msg); err != nil {
		return err
	}
	select {
	case r, ok := <-ch:
		if !ok {
			return fmt.Errorf("%s: connection closed", method)
		}
		if r.Error != nil {
			return fmt.Errorf("%s: %s", method, r.Error.Message)
		}
		if result != nil {
			return json.Unmarshal(r.Result, result)
		}
		return nil
	case <-ctx.Done():
		return fmt.Errorf("%s: %w", method, ctx.Err())
	}
}

// Eval evaluates a JS expression in the page and returns its value as JSON
// (awaiting promises).
func (c *Conn) Eval(ctx context.Context, expr string) (json.RawMessage, error) {
	var r struct {
		Result struct {
			Value json.RawMessage `json:"value"`
		} `json:"result"`
		Exception *struct {
			Text string `json:"text"`
		} `json:"exceptionDetails"`
	}
	if err := c.Call(ctx, "Runtime.evaluate", map[string]any{"expression": expr, "returnByValue": true, "awaitPromise": true}, &r); err != nil {
		return nil, err
	}
	if r.Exception != nil {
		return nil, fmt.Errorf("evaluating %q: %s", expr, r.Exception.Text)
	}
	return r.Result.Value, nil
}

// Events returns the events received so far whose method has the prefix.
func (c *Conn) Events(prefix string) []Event {
	c.mu.Lock()
	defer c.mu.Unlock()
	var out []Event
	for _, e := range c.events {
		if strings.HasPrefix(e.Method, prefix) {
			out = append(out, e)
		}
	}
	return out
}
