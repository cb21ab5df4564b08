package kernel

import (
	"net"
	"testing"
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
