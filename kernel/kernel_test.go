package kernel

import (
	"context"
	"encoding/json"
	"errors"
	"fmt"
	"io"
	"log"
	"net"
	"os"
	"path/filepath"
	"reflect"
	"runtime"
	"strings"
	"sync/atomic"
	"syscall"
	"testing"
	"time"

	"github.com/go-zeromq/zmq4"

	"github.com/tracebook/tracebook/internal/testutil"
)

func TestExecute_IOPubSequence(t *testing.T) {
	tk := startKernel(t, nil)
	c := dial(t, tk.ci, "a")

	reply, iopub := c.execute("outputs", nil)
	got := types(iopub)
	want := []string{"status:busy", "execute_input", "stream", "display_data", "update_display_data", "execute_result", "status:idle"}
	if !reflect.DeepEqual(got, want) {
		t.Fatalf("iopub = %v, want %v", got, want)
	}
	rc := content(t, reply)
	if reply.Header.MsgType != "execute_reply" || rc["status"] != "ok" || rc["execution_count"] != 1.0 {
		t.Fatalf("reply = %s %v", reply.Header.MsgType, rc)
	}
	if in := content(t, iopub[1]); in["code"] != "outputs" || in["execution_count"] != 1.0 {
		t.Errorf("execute_input = %v", in)
	}
	if s := content(t, iopub[2]); s["name"] != "stdout" || s["text"] != "hello\n" {
		t.Errorf("stream = %v", s)
	}
	if d := content(t, iopub[3]); d["transient"].(map[string]any)["display_id"] != "d1" {
		t.Errorf("display_data = %v", d)
	}
	if r := content(t, iopub[5]); r["execution_count"] != 1.0 || r["data"].(map[string]any)["text/plain"] != "42" {
		t.Errorf("execute_result = %v", r)
	}
	for _, m := range append(iopub, reply) {
		if m.Header.Session != tk.k.session || m.Header.Version != ProtocolVersion {
			t.Errorf("%s header = %+v", m.Header.MsgType, m.Header)
		}
	}

	// execution_count counts only requests that store history.
	reply, _ = c.execute("x", map[string]any{"store_history": false})
	if n := content(t, reply)["execution_count"]; n != 1.0 {
		t.Errorf("store_history=false: execution_count = %v, want 1", n)
	}
	reply, _ = c.execute("y", nil)
	if n := content(t, reply)["execution_count"]; n != 2.0 {
		t.Errorf("execution_count = %v, want 2", n)
	}

	// Silent: no execute_input and no outputs, only busy and idle.
	reply, iopub = c.execute("outputs", map[string]any{"silent": true})
	if got, want := types(iopub), []string{"status:busy", "status:idle"}; !reflect.DeepEqual(got, want) {
		t.Errorf("silent iopub = %v, want %v", got, want)
	}
	if n := content(t, reply)["execution_count"]; n != 2.0 {
		t.Errorf("silent: execution_count = %v, want 2", n)
	}
}

// TestExecute_ClearOutput: ClearOutput sends clear_output with its wait
// flag, in order with the cell's other outputs.
func TestExecute_ClearOutput(t *testing.T) {
	tk := startKernel(t, nil)
	c := dial(t, tk.ci, "a")
	_, iopub := c.execute("clear", nil)
	got := types(iopub)
	want := []string{"status:busy", "execute_input", "stream", "clear_output", "display_data", "clear_output", "display_data", "status:idle"}
	if !reflect.DeepEqual(got, want) {
		t.Fatalf("iopub = %v, want %v", got, want)
	}
	for i, wait := range map[int]bool{3: false, 5: true} {
		if cc := content(t, iopub[i]); !reflect.DeepEqual(cc, map[string]any{"wait": wait}) {
			t.Errorf("iopub[%d] clear_output content = %v, want wait %v", i, cc, wait)
		}
	}
	// Silent requests publish no outputs, clears included.
	if _, iopub := c.execute("clear", map[string]any{"silent": true}); !reflect.DeepEqual(types(iopub), []string{"status:busy", "status:idle"}) {
		t.Errorf("silent iopub = %v", types(iopub))
	}
}

// TestFirstSubscriberSeesEarlyMessages: a client whose iopub subscription
// arrives after its first execute_request (as jupyter console's may, since
// it connects its sockets on separate timers while the kernel starts)
// still gets that request's busy, outputs and idle.
func TestFirstSubscriberSeesEarlyMessages(t *testing.T) {
	tk := startKernel(t, nil)
	ctx, cancel := context.WithCancel(context.Background())
	c := &client{t: t, key: []byte(tk.ci.Key), session: newID(), ctx: ctx, cancel: cancel,
		shellIn: make(chan Message, 64), iopubIn: make(chan Message, 1024)}
	c.shell = zmq4.NewDealer(ctx, zmq4.WithID(zmq4.SocketIdentity("late-shell")))
	c.iopub = zmq4.NewSub(ctx)
	t.Cleanup(func() {
		cancel()
		c.shell.Close()
		c.iopub.Close()
	})
	if err := c.shell.Dial(fmt.Sprintf("tcp://%s:%d", tk.ci.IP, tk.ci.ShellPort)); err != nil {
		t.Fatal(err)
	}
	go c.recvLoop(c.shell, c.shellIn)
	id := c.send(c.shell, "execute_request", map[string]any{"code": "hello", "silent": false, "store_history": true})
	c.reply(c.shellIn, id)

	time.Sleep(subscriberWait / 8) // the reply is out; the subscriber comes later
	if err := c.iopub.Dial(fmt.Sprintf("tcp://%s:%d", tk.ci.IP, tk.ci.IOPubPort)); err != nil {
		t.Fatal(err)
	}
	if err := c.iopub.SetOption(zmq4.OptionSubscribe, ""); err != nil {
		t.Fatal(err)
	}
	go c.recvLoop(c.iopub, c.iopubIn)
	got := types(c.collect(id))
	want := []string{"status:busy", "execute_input", "stream", "status:idle"}
	if !reflect.DeepEqual(got, want) {
		t.Errorf("iopub of the first request = %v, want %v", got, want)
	}
	if _, ok := c.waitIOPub("", "status", 0); !ok {
		t.Errorf("the kernel's status starting did not reach the first subscriber")
	}
}

func TestExecute_Errors(t *testing.T) {
	tk := startKernel(t, nil)
	c := dial(t, tk.ci, "a")
	tests := []struct {
		code, ename string
	}{
		{"fail", "ValueError"},
		{"plain-error", "Error"},
		{"panic", "panic"},
	}
	for _, tc := range tests {
		t.Run(tc.code, func(t *testing.T) {
			reply, iopub := c.execute(tc.code, nil)
			rc := content(t, reply)
			if rc["status"] != "error" || rc["ename"] != tc.ename {
				t.Fatalf("reply = %v", rc)
			}
			if _, ok := rc["traceback"].([]any); !ok {
				t.Errorf("traceback = %v, want a list", rc["traceback"])
			}
			got := types(iopub)
			want := []string{"status:busy", "execute_input", "error", "status:idle"}
			if !reflect.DeepEqual(got, want) {
				t.Fatalf("iopub = %v, want %v", got, want)
			}
		})
	}
	// The kernel stays usable.
	if reply, _ := c.execute("ok", nil); content(t, reply)["status"] != "ok" {
		t.Fatalf("after errors: %v", content(t, reply))
	}
}

func TestExecute_UserExpressions(t *testing.T) {
	tk := startKernel(t, nil)
	c := dial(t, tk.ci, "a")
	reply, iopub := c.execute("x", map[string]any{"user_expressions": map[string]string{"a": "1+1", "b": "fail"}})
	ue := content(t, reply)["user_expressions"].(map[string]any)
	a := ue["a"].(map[string]any)
	if a["status"] != "ok" || a["data"].(map[string]any)["text/plain"] != "1+1" {
		t.Errorf("a = %v", a)
	}
	if b := ue["b"].(map[string]any); b["status"] != "error" || b["ename"] != "ValueError" {
		t.Errorf("b = %v", b)
	}
	// Expressions publish nothing.
	if got := types(iopub); len(got) != 4 {
		t.Errorf("iopub = %v", got)
	}
}

func TestExecute_StopOnError(t *testing.T) {
	var queued atomic.Int32
	ready := make(chan struct{}, 16)
	tk := startKernel(t, func(k *kernel) {
		k.onQueued = func() { queued.Add(1); ready <- struct{}{} }
	})
	c := dial(t, tk.ci, "a")
	for range len(ready) {
		<-ready
	}
	queued.Store(0)

	req := func(code string, stop bool) string {
		return c.send(c.shell, "execute_request", map[string]any{"code": code, "stop_on_error": stop})
	}
	// The failing cell blocks until the two behind it are queued.
	ids := []string{req("block-fail", true), req("a", true), req("b", true)}
	for range 3 {
		<-ready
	}
	close(tk.exec.release)
	want := []string{"error", "aborted", "aborted"}
	for i, id := range ids {
		if s := content(t, c.reply(c.shellIn, id))["status"]; s != want[i] {
			t.Errorf("reply %d status = %v, want %s", i, s, want[i])
		}
		c.collect(id)
	}
	// The queue drained: the next request runs.
	if reply, _ := c.execute("c", nil); content(t, reply)["status"] != "ok" {
		t.Errorf("after drain: %v", content(t, reply))
	}
	// stop_on_error false: the next queued request runs.
	id1 := req("fail", false)
	id2 := req("d", true)
	if s := content(t, c.reply(c.shellIn, id1))["status"]; s != "error" {
		t.Errorf("status = %v", s)
	}
	if s := content(t, c.reply(c.shellIn, id2))["status"]; s != "ok" {
		t.Errorf("stop_on_error=false: next status = %v, want ok", s)
	}
}

func TestKernelInfo(t *testing.T) {
	tk := startKernel(t, nil)
	c := dial(t, tk.ci, "a")
	for _, ch := range []struct {
		s  zmq4.Socket
		in chan Message
	}{{c.shell, c.shellIn}, {c.control, c.controlIn}} {
		id := c.send(ch.s, "kernel_info_request", map[string]any{})
		r := c.reply(ch.in, id)
		rc := content(t, r)
		li := rc["language_info"].(map[string]any)
		if r.Header.MsgType != "kernel_info_reply" || rc["protocol_version"] != "5.3" || rc["implementation"] != "tracebook" ||
			li["name"] != "sql" || li["mimetype"] != "application/sql" || rc["status"] != "ok" {
			t.Errorf("kernel_info_reply = %v", rc)
		}
		if got := types(c.collect(id)); !reflect.DeepEqual(got, []string{"status:busy", "status:idle"}) {
			t.Errorf("iopub = %v", got)
		}
	}
}

func TestCompleteInspectIsComplete(t *testing.T) {
	tk := startKernel(t, nil)
	c := dial(t, tk.ci, "a")
	ask := func(msgType string, req map[string]any) map[string]any {
		t.Helper()
		id := c.send(c.shell, msgType, req)
		r := c.reply(c.shellIn, id)
		if want := strings.TrimSuffix(msgType, "_request") + "_reply"; r.Header.MsgType != want {
			t.Fatalf("reply type %s, want %s", r.Header.MsgType, want)
		}
		c.collect(id)
		return content(t, r)
	}
	// Cursor in code points: "é" is one.
	rc := ask("complete_request", map[string]any{"code": "é se", "cursor_pos": 4})
	if !reflect.DeepEqual(rc["matches"], []any{"select", "set"}) || rc["cursor_start"] != 2.0 || rc["cursor_end"] != 4.0 {
		t.Errorf("complete = %v", rc)
	}
	rc = ask("complete_request", map[string]any{"code": "zz", "cursor_pos": 99})
	if !reflect.DeepEqual(rc["matches"], []any{}) || rc["cursor_end"] != 2.0 {
		t.Errorf("complete past the end = %v", rc)
	}
	rc = ask("inspect_request", map[string]any{"code": "select 1", "cursor_pos": 3, "detail_level": 1})
	if rc["found"] != true || rc["data"].(map[string]any)["text/plain"] != "SELECT help 3 1" {
		t.Errorf("inspect = %v", rc)
	}
	rc = ask("inspect_request", map[string]any{"code": "x", "cursor_pos": 0})
	if rc["found"] != false || len(rc["data"].(map[string]any)) != 0 {
		t.Errorf("inspect not found = %v", rc)
	}
	if rc = ask("is_complete_request", map[string]any{"code": "select 1;"}); rc["status"] != "complete" || rc["indent"] != nil {
		t.Errorf("is_complete = %v", rc)
	}
	if rc = ask("is_complete_request", map[string]any{"code": "select"}); rc["status"] != "incomplete" || rc["indent"] != "  " {
		t.Errorf("is_complete = %v", rc)
	}
	if rc = ask("is_complete_request", map[string]any{"code": "??"}); rc["status"] != "unknown" {
		t.Errorf("is_complete with a bad executor status = %v", rc)
	}
	if rc = ask("comm_info_request", map[string]any{}); rc["status"] != "ok" || len(rc["comms"].(map[string]any)) != 0 {
		t.Errorf("comm_info = %v", rc)
	}
	if rc = ask("nonsense_request", map[string]any{}); rc["status"] != "error" || rc["ename"] != "UnknownMessageType" {
		t.Errorf("unknown request = %v", rc)
	}
}

func TestCommOpenUnknownTarget(t *testing.T) {
	tk := startKernel(t, nil)
	c := dial(t, tk.ci, "a")
	id := c.send(c.shell, "comm_open", map[string]any{"comm_id": "c1", "target_name": "nope", "data": map[string]any{}})
	got := c.collect(id)
	if ts := types(got); !reflect.DeepEqual(ts, []string{"status:busy", "comm_close", "status:idle"}) {
		t.Fatalf("iopub = %v", ts)
	}
	if cc := content(t, got[1]); cc["comm_id"] != "c1" {
		t.Errorf("comm_close = %v", cc)
	}
}

func TestHistoryRequest(t *testing.T) {
	tk := startKernel(t, nil)
	c := dial(t, tk.ci, "a")
	for _, code := range []string{"select 1", "select 2", "show tables", "select 1"} {
		c.execute(code, nil)
	}
	id := c.send(c.shell, "history_request", map[string]any{"hist_access_type": "search", "pattern": "select*", "unique": true, "output": false, "raw": true})
	rc := content(t, c.reply(c.shellIn, id))
	want := []any{[]any{1.0, 2.0, "select 2"}, []any{1.0, 4.0, "select 1"}}
	if !reflect.DeepEqual(rc["history"], want) {
		t.Errorf("history = %v, want %v", rc["history"], want)
	}
}

func TestInterrupt(t *testing.T) {
	tk := startKernel(t, nil)
	c := dial(t, tk.ci, "a")
	id := c.send(c.shell, "execute_request", map[string]any{"code": "sleep"})
	if _, ok := c.waitIOPub(id, "execute_input", wait); !ok {
		t.Fatal("cell did not start")
	}
	start := time.Now()
	iid := c.send(c.control, "interrupt_request", map[string]any{})
	if r := c.reply(c.controlIn, iid); r.Header.MsgType != "interrupt_reply" || content(t, r)["status"] != "ok" {
		t.Fatalf("interrupt reply = %s %v", r.Header.MsgType, content(t, r))
	}
	rc := content(t, c.reply(c.shellIn, id))
	if d := time.Since(start); d > time.Second {
		t.Errorf("interrupt took %v, want < 1s", d)
	}
	if rc["status"] != "error" || rc["ename"] != "KeyboardInterrupt" {
		t.Errorf("reply = %v", rc)
	}
	if reply, _ := c.execute("after", nil); content(t, reply)["status"] != "ok" {
		t.Errorf("after interrupt: %v", content(t, reply))
	}
}

func TestInterrupt_SIGINT(t *testing.T) {
	tk := startKernel(t, nil)
	stop := tk.k.handleSIGINT()
	defer stop()
	c := dial(t, tk.ci, "a")
	id := c.send(c.shell, "execute_request", map[string]any{"code": "sleep"})
	if _, ok := c.waitIOPub(id, "execute_input", wait); !ok {
		t.Fatal("cell did not start")
	}
	if err := syscall.Kill(syscall.Getpid(), syscall.SIGINT); err != nil {
		t.Fatal(err)
	}
	if rc := content(t, c.reply(c.shellIn, id)); rc["ename"] != "KeyboardInterrupt" {
		t.Errorf("reply = %v", rc)
	}
	if reply, _ := c.execute("after", nil); content(t, reply)["status"] != "ok" {
		t.Errorf("after SIGINT: %v", content(t, reply))
	}
}

func TestShutdown(t *testing.T) {
	for _, restart := range []bool{false, true} {
		t.Run(map[bool]string{false: "shutdown", true: "restart"}[restart], func(t *testing.T) {
			tk := startKernel(t, nil)
			c := dial(t, tk.ci, "a")
			// A running cell is cancelled by the shutdown.
			eid := c.send(c.shell, "execute_request", map[string]any{"code": "sleep"})
			if _, ok := c.waitIOPub(eid, "execute_input", wait); !ok {
				t.Fatal("cell did not start")
			}
			id := c.send(c.control, "shutdown_request", map[string]any{"restart": restart})
			r := c.reply(c.controlIn, id)
			if rc := content(t, r); r.Header.MsgType != "shutdown_reply" || rc["status"] != "ok" || rc["restart"] != restart {
				t.Fatalf("reply = %s %v", r.Header.MsgType, rc)
			}
			// iopub was flushed before exit: the broadcast and the idle arrive.
			if got := types(c.collect(id)); !reflect.DeepEqual(got, []string{"status:busy", "shutdown_reply", "status:idle"}) {
				t.Errorf("iopub = %v", got)
			}
			select {
			case err := <-tk.done:
				if err != nil {
					t.Errorf("serve = %v", err)
				}
			case <-time.After(wait):
				t.Fatal("serve did not return")
			}
			if strings.Contains(tk.logs.String(), "not flushed") {
				t.Errorf("iopub flush timed out")
			}
			tk.exec.mu.Lock()
			defer tk.exec.mu.Unlock()
			if !reflect.DeepEqual(tk.exec.shutdowns, []bool{restart}) {
				t.Errorf("Executor.Shutdown calls = %v", tk.exec.shutdowns)
			}
		})
	}
}

func TestTwoClients(t *testing.T) {
	tk := startKernel(t, nil)
	a := dial(t, tk.ci, "alice")
	b := dial(t, tk.ci, "bob")
	ida := a.send(a.shell, "execute_request", map[string]any{"code": "A"})
	idb := b.send(b.shell, "execute_request", map[string]any{"code": "B"})
	if r := a.reply(a.shellIn, ida); content(t, r)["status"] != "ok" {
		t.Error("alice's reply")
	}
	if r := b.reply(b.shellIn, idb); content(t, r)["status"] != "ok" {
		t.Error("bob's reply")
	}
	// Both see both cells on iopub.
	for _, c := range []*client{a, b} {
		c.collect(ida)
		c.collect(idb)
	}
	select {
	case m := <-a.shellIn:
		t.Errorf("alice got an extra reply %s", m.Header.MsgType)
	default:
	}
}

func TestClientGoneBeforeReply(t *testing.T) {
	tk := startKernel(t, nil)
	a := dial(t, tk.ci, "leaver")
	id := a.send(a.shell, "execute_request", map[string]any{"code": "block"})
	if _, ok := a.waitIOPub(id, "execute_input", wait); !ok {
		t.Fatal("cell did not start")
	}
	a.close()
	close(tk.exec.release) // the reply goes to an identity that left
	b := dial(t, tk.ci, "stayer")
	if reply, _ := b.execute("x", nil); content(t, reply)["status"] != "ok" {
		t.Errorf("reply = %v", content(t, reply))
	}
}

func TestBadSignatureDropped(t *testing.T) {
	tk := startKernel(t, nil)
	c := dial(t, tk.ci, "a")
	bad := c.frames("execute_request", map[string]any{"code": "forged"}, []byte("wrong key"))
	badID := c.lastID
	if err := c.shell.SendMulti(zmq4.NewMsgFrom(bad...)); err != nil {
		t.Fatal(err)
	}
	unsigned := c.frames("execute_request", map[string]any{"code": "unsigned"}, nil)
	if err := c.shell.SendMulti(zmq4.NewMsgFrom(unsigned...)); err != nil {
		t.Fatal(err)
	}
	// Requests are served in order, so a reply to the forged ones would come
	// before this one.
	id := c.send(c.shell, "kernel_info_request", map[string]any{})
	c.reply(c.shellIn, id)
	if !strings.Contains(tk.logs.String(), "bad signature") {
		t.Errorf("no log line for the bad signature")
	}
	if strings.Contains(tk.logs.String(), badID) {
		t.Errorf("the forged request was served")
	}
}

func TestMalformedFrames(t *testing.T) {
	tk := startKernel(t, nil)
	c := dial(t, tk.ci, "a")
	good := c.frames("kernel_info_request", map[string]any{}, c.key)
	cases := [][][]byte{
		{[]byte("no delimiter")},
		{[]byte("<IDS|MSG>")},
		{[]byte("<IDS|MSG>"), []byte("sig"), []byte("{}")},
		append([][]byte{}, good[0], good[1], []byte("not json"), good[3], good[4], good[5]),
		{[]byte("<IDS|MSG>"), nil, nil, nil, nil, nil},
		{{}},
	}
	for _, frames := range cases {
		if err := c.shell.SendMulti(zmq4.NewMsgFrom(frames...)); err != nil {
			t.Fatal(err)
		}
	}
	// Well-formed and signed, but the content does not fit the type.
	id := c.send(c.shell, "execute_request", map[string]any{"code": 42})
	if rc := content(t, c.reply(c.shellIn, id)); rc["status"] != "error" {
		t.Errorf("ill-typed content: %v", rc)
	}
	c.collect(id)
	// stdin: an input_reply the kernel never asked for is ignored.
	c.send(c.stdin, "input_reply", map[string]any{"value": "x"})
	id = c.send(c.shell, "kernel_info_request", map[string]any{})
	c.reply(c.shellIn, id)
}

// TestZmq4SilentPeerBlocksAccept documents the zmq4 v0.17.0 fault the
// guarded transport exists for: on a plain tcp:// ROUTER, one TCP peer that
// sends nothing keeps every later client from connecting.
func TestZmq4SilentPeerBlocksAccept(t *testing.T) {
	r := zmq4.NewRouter(t.Context(), zmq4.WithLogger(log.New(io.Discard, "", 0)))
	defer r.Close()
	if err := r.Listen("tcp://127.0.0.1:0"); err != nil {
		t.Fatal(err)
	}
	silent, err := net.Dial("tcp", r.Addr().String())
	if err != nil {
		t.Fatal(err)
	}
	d := zmq4.NewDealer(t.Context())
	defer d.Close()
	dialed := make(chan error, 1)
	go func() { dialed <- d.Dial("tcp://" + r.Addr().String()) }()
	select {
	case err := <-dialed:
		t.Logf("zmq4 no longer blocks accept on a silent peer (dial: %v); the guard is still harmless", err)
		silent.Close()
		return
	case <-time.After(time.Second):
	}
	silent.Close() // unblocks zmq4's accept loop
	select {
	case <-dialed:
	case <-time.After(wait):
		t.Fatal("dial still blocked after the silent peer left")
	}
}

func TestSilentPeer(t *testing.T) {
	tk := startKernel(t, nil)
	for _, port := range []int{tk.ci.ShellPort, tk.ci.ControlPort, tk.ci.StdinPort, tk.ci.IOPubPort, tk.ci.HBPort} {
		silent, err := net.Dial("tcp", net.JoinHostPort(tk.ci.IP, itoa(port)))
		if err != nil {
			t.Fatal(err)
		}
		defer silent.Close()
	}
	start := time.Now()
	c := dial(t, tk.ci, "a") // probes shell and iopub
	if r, _ := c.execute("x", nil); content(t, r)["status"] != "ok" {
		t.Fatal("execute")
	}
	if d := time.Since(start); d > handshakeTimeout/2 {
		t.Errorf("client served after %v: it waited for the silent peers' deadline", d)
	}
}

func TestHalfHandshakePeerBounded(t *testing.T) {
	// Short, so that the test sees the deadline act, yet long enough for
	// the real client's own handshake on a loaded machine. The client waits
	// behind the half-open peer in zmq4's one-at-a-time handshakes; its own
	// deadline starts when zmq4 takes it (it used to expire together with
	// the peer's).
	defer setVar(&handshakeTimeout, 2*time.Second)()
	tk := startKernel(t, nil)
	// A peer that sends the ZMTP signature and stops is closed at the
	// handshake deadline; clients behind it connect then.
	p, err := net.Dial("tcp", net.JoinHostPort(tk.ci.IP, itoa(tk.ci.ShellPort)))
	if err != nil {
		t.Fatal(err)
	}
	defer p.Close()
	if _, err := p.Write([]byte{0xff, 0, 0, 0, 0, 0, 0, 0, 1, 0x7f}); err != nil {
		t.Fatal(err)
	}
	c := dial(t, tk.ci, "a")
	if r, _ := c.execute("x", nil); content(t, r)["status"] != "ok" {
		t.Fatal("execute")
	}
	p.SetReadDeadline(time.Now().Add(wait))
	if _, err := io.ReadAll(p); err != nil && !errors.Is(err, syscall.ECONNRESET) {
		t.Errorf("kernel did not close the half-open peer: %v", err)
	}
}

func TestHeartbeat(t *testing.T) {
	tk := startKernel(t, nil)
	c := dial(t, tk.ci, "a")
	for i := range 3 {
		ping := []byte("ping-" + itoa(i))
		if err := c.hb.Send(zmq4.NewMsg(ping)); err != nil {
			t.Fatal(err)
		}
		got := make(chan zmq4.Msg, 1)
		go func() {
			m, _ := c.hb.Recv()
			got <- m
		}()
		select {
		case m := <-got:
			if len(m.Frames) != 1 || string(m.Frames[0]) != string(ping) {
				t.Fatalf("heartbeat echo = %q", m.Frames)
			}
		case <-time.After(wait):
			t.Fatal("no heartbeat echo")
		}
	}
}

func TestNoGoroutineGrowth(t *testing.T) {
	if testing.Short() {
		t.Skip("1000 executes")
	}
	tk := startKernel(t, nil)
	c := dial(t, tk.ci, "a")
	for range 20 { // warm up
		c.execute("x", nil)
	}
	var m0, m1 runtime.MemStats
	runtime.GC()
	runtime.ReadMemStats(&m0)
	g0 := runtime.NumGoroutine()
	for range 1000 {
		c.execute("select 1", nil)
	}
	runtime.GC()
	runtime.ReadMemStats(&m1)
	// Let goroutines that were finishing (timers of the last request) end.
	g1 := runtime.NumGoroutine()
	for i := 0; g1 > g0 && i < 100; i++ {
		time.Sleep(10 * time.Millisecond)
		g1 = runtime.NumGoroutine()
	}
	if g1 > g0 {
		t.Errorf("goroutines: %d before, %d after 1000 executes", g0, g1)
	}
	growth := int64(m1.HeapAlloc) - int64(m0.HeapAlloc)
	t.Logf("heap: %d KiB before, %d KiB after (history holds 1000 cells)", m0.HeapAlloc>>10, m1.HeapAlloc>>10)
	if growth > 8<<20 {
		t.Errorf("heap grew by %d KiB over 1000 executes", growth>>10)
	}
}

func TestIdleUsesNoCPU(t *testing.T) {
	tk := startKernel(t, nil)
	c := dial(t, tk.ci, "a")
	c.execute("x", nil)
	runtime.GC() // leftovers of earlier tests are not the kernel's
	c0 := testutil.CPUTime()
	time.Sleep(time.Second)
	used := testutil.CPUTime() - c0
	t.Logf("CPU over 1 s idle: %v", used)
	if used > 50*time.Millisecond {
		t.Errorf("idle kernel used %v of CPU in 1 s", used)
	}
}

func TestPublishQueueFullDrops(t *testing.T) {
	// A kernel whose sender is not running: publish must not block.
	k := &kernel{out: make(chan outMsg, 2), log: discardLog(), session: "s"}
	done := make(chan struct{})
	go func() {
		for range 10 {
			k.publishOutput(Header{}, "stream", streamContent{Name: "stdout", Text: "x"})
		}
		close(done)
	}()
	select {
	case <-done:
	case <-time.After(wait):
		t.Fatal("publish blocked on a full queue")
	}
	if n := k.dropped.Load(); n != 8 {
		t.Errorf("dropped = %d, want 8", n)
	}
}

func TestLateOutputDropped(t *testing.T) {
	tk := startKernel(t, nil)
	c := dial(t, tk.ci, "a")
	_, iopub := c.execute("none", nil)
	tk.exec.mu.Lock()
	pub := tk.exec.pubs[len(tk.exec.pubs)-1]
	tk.exec.mu.Unlock()
	pub.Stream("stdout", "late")
	reply, iopub2 := c.execute("y", nil)
	if content(t, reply)["status"] != "ok" {
		t.Fatal("execute")
	}
	for _, m := range append(iopub, iopub2...) {
		if m.Header.MsgType == "stream" {
			t.Errorf("late output was published")
		}
	}
}

// A cell that detached its publisher (work left running, such as a
// background load) still updates its display after it returned, parented
// to its own request.
func TestDetachedOutputAfterReturn(t *testing.T) {
	tk := startKernel(t, nil)
	c := dial(t, tk.ci, "a")
	reply, _ := c.execute("detach", nil)
	if content(t, reply)["status"] != "ok" {
		t.Fatal("execute")
	}
	tk.exec.mu.Lock()
	pub := tk.exec.pubs[len(tk.exec.pubs)-1]
	tk.exec.mu.Unlock()
	pub.UpdateDisplay(map[string]any{"text/plain": "finished"}, nil, "bg")
	m, ok := c.waitIOPub(reply.Parent.MsgID, "update_display_data", wait)
	if !ok {
		t.Fatal("no update_display_data after the detached cell returned")
	}
	if got := content(t, m); fmt.Sprint(got["data"]) != "map[text/plain:finished]" || fmt.Sprint(got["transient"]) != "map[display_id:bg]" {
		t.Errorf("update = %v", got)
	}
}

// An interrupt with no cell running goes to the executor's work between
// cells (IdleInterrupter); one that stops a cell does not.
func TestInterruptIdle(t *testing.T) {
	tk := startKernel(t, nil)
	c := dial(t, tk.ci, "a")
	idle := func() int {
		tk.exec.mu.Lock()
		defer tk.exec.mu.Unlock()
		return tk.exec.idle
	}
	iid := c.send(c.control, "interrupt_request", map[string]any{})
	c.reply(c.controlIn, iid)
	if n := idle(); n != 1 {
		t.Errorf("InterruptIdle called %d times for an interrupt with no cell running, want 1", n)
	}
	id := c.send(c.shell, "execute_request", map[string]any{"code": "sleep"})
	if _, ok := c.waitIOPub(id, "execute_input", wait); !ok {
		t.Fatal("cell did not start")
	}
	iid = c.send(c.control, "interrupt_request", map[string]any{})
	c.reply(c.controlIn, iid)
	c.reply(c.shellIn, id)
	if n := idle(); n != 1 {
		t.Errorf("InterruptIdle called %d times after interrupting a running cell, want still 1", n)
	}
}

func BenchmarkExecuteRoundTrip(b *testing.B) {
	tk := startKernel(b, nil)
	c := dial(b, tk.ci, "a")
	lat := make([]time.Duration, 0, b.N)
	b.ResetTimer()
	for range b.N {
		start := time.Now()
		id := c.send(c.shell, "execute_request", map[string]any{"code": "1", "silent": false, "store_history": true})
		c.reply(c.shellIn, id)
		lat = append(lat, time.Since(start))
		c.collect(id)
	}
	b.StopTimer()
	sortDurations(lat)
	b.ReportMetric(float64(lat[len(lat)/2].Microseconds())/1000, "p50-ms")
	b.ReportMetric(float64(lat[len(lat)*99/100].Microseconds())/1000, "p99-ms")
}

// rawPeer connects to addr as a ZMTP peer of socket type typ (NULL
// mechanism), completing the handshake by writing only.
func rawPeer(t *testing.T, addr, typ string, rcvbuf int) net.Conn {
	t.Helper()
	d := net.Dialer{Control: func(network, address string, c syscall.RawConn) error {
		if rcvbuf == 0 {
			return nil
		}
		return c.Control(func(fd uintptr) {
			syscall.SetsockoptInt(int(fd), syscall.SOL_SOCKET, syscall.SO_RCVBUF, rcvbuf)
		})
	}}
	conn, err := d.Dial("tcp", addr)
	if err != nil {
		t.Fatal(err)
	}
	greeting := make([]byte, 64)
	greeting[0], greeting[9], greeting[10] = 0xff, 0x7f, 3
	copy(greeting[12:], "NULL")
	body := []byte{5}
	body = append(body, "READY"...)
	body = append(body, 11)
	body = append(body, "Socket-Type"...)
	body = append(body, 0, 0, 0, byte(len(typ)))
	body = append(body, typ...)
	ready := append([]byte{0x04, byte(len(body))}, body...)
	for _, b := range [][]byte{greeting, ready} {
		if _, err := conn.Write(b); err != nil {
			t.Fatal(err)
		}
	}
	return conn
}

func TestHugeFrameClosesPeer(t *testing.T) {
	tk := startKernel(t, nil)
	p := rawPeer(t, net.JoinHostPort(tk.ci.IP, itoa(tk.ci.ShellPort)), "DEALER", 0)
	defer p.Close()
	// A long frame announcing 1 TiB: zmq4 alone would allocate it.
	if _, err := p.Write([]byte{0x02, 0, 0, 1, 0, 0, 0, 0, 0, 'x'}); err != nil {
		t.Fatal(err)
	}
	p.SetReadDeadline(time.Now().Add(wait))
	// Closed with unread data, the kernel's side resets the connection.
	if _, err := io.ReadAll(p); err != nil && !errors.Is(err, syscall.ECONNRESET) {
		t.Errorf("kernel did not close the peer: %v", err)
	}
	c := dial(t, tk.ci, "a")
	if r, _ := c.execute("x", nil); content(t, r)["status"] != "ok" {
		t.Fatal("execute")
	}
	if !strings.Contains(tk.logs.String(), "exceeds the limit") {
		t.Errorf("no log line for the huge frame")
	}
}

// stalledSubscriber connects to the iopub port as a ZMTP SUB peer,
// subscribes to everything and then never reads.
func stalledSubscriber(t *testing.T, addr string) net.Conn {
	t.Helper()
	conn := rawPeer(t, addr, "SUB", 4096)
	if _, err := conn.Write([]byte{0x00, 1, 1}); err != nil { // subscribe to all
		t.Fatal(err)
	}
	return conn
}

func TestStalledSubscriber(t *testing.T) {
	defer setVar(&writeTimeout, 300*time.Millisecond)()
	defer setVar(&iopubQueueSize, 16)()
	tk := startKernel(t, nil)
	healthy := dial(t, tk.ci, "healthy")
	stalled := stalledSubscriber(t, net.JoinHostPort(tk.ci.IP, itoa(tk.ci.IOPubPort)))
	defer stalled.Close()
	// Wait until the kernel counts the stalled peer as a subscriber.
	deadline := time.Now().Add(wait)
	for tk.k.iopubL.activeConns() < 2 {
		if time.Now().After(deadline) {
			t.Fatal("stalled subscriber never subscribed")
		}
		time.Sleep(10 * time.Millisecond)
	}

	const n = 100 // 6 MiB of output, far beyond the socket buffers
	start := time.Now()
	reply, iopub := healthy.execute("big "+itoa(n), nil)
	elapsed := time.Since(start)
	if content(t, reply)["status"] != "ok" {
		t.Fatalf("reply = %v", content(t, reply))
	}
	// The protocol messages all arrive; outputs beyond the queue are dropped.
	var kinds []string
	streams := 0
	for _, m := range iopub {
		if m.Header.MsgType == "stream" {
			streams++
			continue
		}
		kinds = append(kinds, types([]Message{m})[0])
	}
	if want := []string{"status:busy", "execute_input", "status:idle"}; !reflect.DeepEqual(kinds, want) {
		t.Errorf("iopub without streams = %v, want %v", kinds, want)
	}
	t.Logf("healthy subscriber got %d of %d streams in %v with a stalled one connected; %d dropped", streams, n, elapsed, tk.k.dropped.Load())
	if int64(streams)+tk.k.dropped.Load() != n {
		t.Errorf("%d streams delivered + %d dropped != %d", streams, tk.k.dropped.Load(), n)
	}
	logs := tk.logs.String()
	if !strings.Contains(logs, "peer stopped reading") {
		t.Errorf("the stalled subscriber was not disconnected")
	}
	if tk.k.dropped.Load() > 0 && !strings.Contains(logs, "iopub queue full; dropping output") {
		t.Errorf("drops were not logged")
	}
	// The kernel carries on, with every output delivered again.
	if _, iopub := healthy.execute("outputs", nil); len(iopub) != 7 {
		t.Fatalf("after the stall: %v", types(iopub))
	}
}

// TestKernelLifecycleGoroutines checks that a kernel leaves no goroutine
// behind, except the one zmq4 v0.17.0 leaks per PUB socket: Close never
// stops its writer (pubMWriter.run waits on a condition forever). A process
// runs one kernel, so that is one goroutine.
func TestKernelLifecycleGoroutines(t *testing.T) {
	g0 := countGoroutines()
	for range 3 {
		tk := startKernel(t, nil)
		c := dial(t, tk.ci, "a")
		c.execute("x", nil)
		id := c.send(c.control, "shutdown_request", map[string]any{"restart": false})
		c.reply(c.controlIn, id)
		<-tk.done
		c.close()
	}
	g1 := countGoroutines()
	for i := 0; g1 > g0 && i < 200; i++ {
		time.Sleep(10 * time.Millisecond)
		g1 = countGoroutines()
	}
	if g1 > g0 {
		buf := make([]byte, 1<<20)
		t.Errorf("goroutines: %d before 3 kernel lifetimes, %d after\n%s", g0, g1, buf[:runtime.Stack(buf, true)])
	}
}

// countGoroutines counts goroutines other than zmq4's leaked PUB writers.
func countGoroutines() int {
	buf := make([]byte, 1<<20)
	n := 0
	for _, g := range strings.Split(string(buf[:runtime.Stack(buf, true)]), "\n\n") {
		if !strings.Contains(g, "(*pubMWriter).run") {
			n++
		}
	}
	return n
}

// freePorts returns n loopback ports that were free a moment ago.
func freePorts(t *testing.T, n int) []int {
	t.Helper()
	var ports []int
	var ls []net.Listener
	for range n {
		l, err := net.Listen("tcp", "127.0.0.1:0")
		if err != nil {
			t.Fatal(err)
		}
		ls = append(ls, l)
		ports = append(ports, l.Addr().(*net.TCPAddr).Port)
	}
	for _, l := range ls {
		l.Close()
	}
	return ports
}

func TestRun(t *testing.T) {
	p := freePorts(t, 5)
	ci := ConnectionInfo{Transport: "tcp", IP: "127.0.0.1", ShellPort: p[0], ControlPort: p[1], StdinPort: p[2], IOPubPort: p[3], HBPort: p[4],
		SignatureScheme: "hmac-sha256", Key: testKey}
	b, _ := json.Marshal(ci)
	conn := filepath.Join(t.TempDir(), "kernel-run.json")
	if err := os.WriteFile(conn, b, 0o600); err != nil {
		t.Fatal(err)
	}
	ex := newTestExec()
	done := make(chan error, 1)
	go func() { done <- Run(context.Background(), conn, ex, Info{LanguageName: "sql"}, nil) }()
	c := dial(t, ci, "a")
	if r, _ := c.execute("x", nil); content(t, r)["status"] != "ok" {
		t.Fatal("execute")
	}
	id := c.send(c.control, "shutdown_request", map[string]any{"restart": true})
	c.reply(c.controlIn, id)
	select {
	case err := <-done:
		if err != nil {
			t.Errorf("Run = %v", err)
		}
	case <-time.After(wait):
		t.Fatal("Run did not return")
	}
}

func TestRun_Errors(t *testing.T) {
	dir := t.TempDir()
	write := func(name string, ci ConnectionInfo) string {
		b, _ := json.Marshal(ci)
		p := filepath.Join(dir, name)
		os.WriteFile(p, b, 0o600)
		return p
	}
	bad := filepath.Join(dir, "bad.json")
	os.WriteFile(bad, []byte("{"), 0o600)
	tests := []struct {
		name, file, want string
	}{
		{"missing file", filepath.Join(dir, "none.json"), "read connection file: "},
		{"not JSON", bad, "connection file " + bad + ": "},
		{"ipc", write("ipc.json", ConnectionInfo{Transport: "ipc"}), `transport "ipc" is not supported (only tcp)`},
		{"md5", write("md5.json", ConnectionInfo{Key: "k", SignatureScheme: "hmac-md5"}), `unsupported signature scheme "hmac-md5" (only hmac-sha256)`},
	}
	for _, tc := range tests {
		t.Run(tc.name, func(t *testing.T) {
			err := Run(context.Background(), tc.file, newTestExec(), Info{}, nil)
			if err == nil || !strings.HasPrefix(err.Error(), tc.want) {
				t.Errorf("Run() = %v, want prefix %q", err, tc.want)
			}
		})
	}
}

func TestUnencodableOutput(t *testing.T) {
	tk := startKernel(t, nil)
	c := dial(t, tk.ci, "a")
	reply, iopub := c.execute("nan", map[string]any{"user_expressions": map[string]string{"v": "nan"}})
	if got, want := types(iopub), []string{"status:busy", "execute_input", "stream", "stream", "status:idle"}; !reflect.DeepEqual(got, want) {
		t.Errorf("iopub = %v, want %v", got, want)
	}
	if s := content(t, iopub[2]); s["name"] != "stderr" || !strings.Contains(s["text"].(string), "cannot send the display_data output") {
		t.Errorf("stream = %v", s)
	}
	// The user expression's NaN makes the reply unencodable: an error reply
	// still comes.
	if rc := content(t, reply); rc["status"] != "error" || rc["ename"] != "EncodingError" {
		t.Errorf("reply = %v", rc)
	}
}
