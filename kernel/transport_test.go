package kernel

import (
	"bytes"
	"encoding/binary"
	"net"
	"testing"
	"time"
)

func newFollower(t *testing.T) *guardConn {
	a, b := net.Pipe()
	t.Cleanup(func() { a.Close(); b.Close() })
	return &guardConn{Conn: a, l: &guardListener{maxFrame: 1 << 16, log: discardLog()}, greetLeft: 64}
}

// zmtpStream is a greeting, a READY command and one two-frame message.
func zmtpStream() []byte {
	s := make([]byte, 64)
	s[0], s[9], s[10] = 0xff, 0x7f, 3
	s = append(s, 0x04, 6, 5, 'R', 'E', 'A', 'D', 'Y')
	s = append(s, 0x01, 0)                      // empty delimiter frame, more
	s = append(s, 0x02, 0, 0, 0, 0, 0, 0, 1, 0) // long frame of 256 bytes
	s = append(s, make([]byte, 256)...)
	return s
}

func TestFollow(t *testing.T) {
	c := newFollower(t)
	if err := c.follow(zmtpStream()); err != nil {
		t.Fatal(err)
	}
	if c.frames != 3 || !c.active.Load() || c.greetLeft != 0 || c.inBody || c.hdrHave != 0 {
		t.Errorf("after the stream: frames %d, active %v, greetLeft %d, inBody %v, hdrHave %d", c.frames, c.active.Load(), c.greetLeft, c.inBody, c.hdrHave)
	}
	huge := append(zmtpStream(), 0x02, 0, 0, 0, 0, 0, 1, 0, 1)
	if err := newFollower(t).follow(huge); err == nil || err.Error() != "frame of 65537 bytes exceeds the limit of 65536" {
		t.Errorf("huge frame: %v", err)
	}
}

// FuzzFollow checks that the ZMTP frame tracker never panics and that
// where a stream is cut between reads does not change its outcome.
func FuzzFollow(f *testing.F) {
	f.Add(zmtpStream(), uint16(70))
	f.Add(zmtpStream(), uint16(0))
	f.Add(append(zmtpStream(), 0x02, 0xff, 0xff, 0xff, 0xff, 0xff, 0xff, 0xff, 0xff), uint16(300))
	f.Fuzz(func(t *testing.T, data []byte, cut uint16) {
		k := int(cut) % (len(data) + 1)
		whole, parts := newFollower(t), newFollower(t)
		e1 := whole.follow(data)
		e2 := parts.follow(data[:k])
		if e2 == nil {
			e2 = parts.follow(data[k:])
		}
		if (e1 == nil) != (e2 == nil) {
			t.Fatalf("whole: %v, in two reads: %v", e1, e2)
		}
		if e1 == nil && (whole.frames != parts.frames || whole.bodyLeft != parts.bodyLeft || whole.hdrHave != parts.hdrHave) {
			t.Fatalf("state differs: %d/%d frames", whole.frames, parts.frames)
		}
	})
}

// recordConn records the writes that reach the socket.
type recordConn struct {
	net.Conn
	writes [][]byte
}

func (r *recordConn) Write(p []byte) (int, error) {
	r.writes = append(r.writes, append([]byte(nil), p...))
	return len(p), nil
}
func (r *recordConn) SetWriteDeadline(time.Time) error { return nil }

// zmtpWrites is what zmq4 writes for a greeting, a READY command and the
// given messages: each frame's header and body as separate writes.
func zmtpWrites(msgs [][][]byte) (writes [][]byte, ends []int) {
	greeting := make([]byte, 64)
	greeting[0], greeting[9] = 0xff, 0x7f
	writes = append(writes, greeting)
	ends = append(ends, len(writes))
	writes = append(writes, []byte{0x04, 6}, []byte("\x05READY"))
	ends = append(ends, len(writes))
	for _, m := range msgs {
		for i, f := range m {
			var flag byte
			if i < len(m)-1 {
				flag = 0x01
			}
			if len(f) > 255 {
				hdr := []byte{flag | 0x02, 0, 0, 0, 0, 0, 0, 0, 0}
				binary.BigEndian.PutUint64(hdr[1:], uint64(len(f)))
				writes = append(writes, hdr)
			} else {
				writes = append(writes, []byte{flag, byte(len(f))})
			}
			if len(f) > 0 {
				writes = append(writes, f)
			}
		}
		ends = append(ends, len(writes))
	}
	return writes, ends
}

func TestWriteCoalescing(t *testing.T) {
	msgs := [][][]byte{
		{[]byte("topic"), []byte("<IDS|MSG>"), []byte("sig"), []byte(`{"msg_id":"1"}`), {}, []byte("{}"), []byte(`{"a":1}`)},
		{[]byte("x")},
		{make([]byte, 100<<10), []byte("tail")}, // a body larger than the coalescing buffer
	}
	writes, ends := zmtpWrites(msgs)
	rc := &recordConn{}
	c := &guardConn{Conn: rc, l: &guardListener{wrTime: time.Second, log: discardLog()}, wGreetLeft: 64}
	var want []byte
	next := 0
	for i, w := range writes {
		if n, err := c.Write(w); n != len(w) || err != nil {
			t.Fatalf("Write = %d, %v", n, err)
		}
		want = append(want, w...)
		if i+1 == ends[next] {
			next++
			if len(c.wbuf) != 0 {
				t.Fatalf("%d bytes held at the end of unit %d", len(c.wbuf), next)
			}
		}
	}
	got := bytes.Join(rc.writes, nil)
	if !bytes.Equal(got, want) {
		t.Fatalf("socket got %d bytes, want %d", len(got), len(want))
	}
	// greeting, READY, message 1, message 2, then message 3 as held
	// header + large body + the rest.
	if len(rc.writes) != 7 {
		t.Errorf("%d socket writes, want 7", len(rc.writes))
	}
}

// FuzzWriteCoalescing checks that whatever frames zmq4 writes, the socket
// gets the same bytes and nothing is held at the end of a message.
func FuzzWriteCoalescing(f *testing.F) {
	f.Add([]byte("a\x00bc\x01\x00d"), uint16(300))
	f.Fuzz(func(t *testing.T, spec []byte, big uint16) {
		// spec: 0x00 ends a message, 0x01 adds a large frame, other bytes
		// add a frame of that length.
		var msgs [][][]byte
		var cur [][]byte
		for _, b := range spec {
			switch b {
			case 0:
				if len(cur) > 0 {
					msgs = append(msgs, cur)
					cur = nil
				}
			case 1:
				cur = append(cur, make([]byte, int(big)*4))
			default:
				cur = append(cur, bytes.Repeat([]byte{b}, int(b)))
			}
		}
		if len(cur) > 0 {
			msgs = append(msgs, cur)
		}
		writes, ends := zmtpWrites(msgs)
		rc := &recordConn{}
		c := &guardConn{Conn: rc, l: &guardListener{wrTime: time.Second, log: discardLog()}, wGreetLeft: 64}
		var want []byte
		next := 0
		for i, w := range writes {
			c.Write(w)
			want = append(want, w...)
			if i+1 == ends[next] {
				next++
				if len(c.wbuf) != 0 {
					t.Fatalf("%d bytes held at the end of unit %d", len(c.wbuf), next)
				}
			}
		}
		if got := bytes.Join(rc.writes, nil); !bytes.Equal(got, want) {
			t.Fatalf("socket got %d bytes, want %d", len(got), len(want))
		}
	})
}
