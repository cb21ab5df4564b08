package kernel

import (
	"bytes"
	"encoding/json"
	"errors"
	"reflect"
	"testing"
)

var wireKey = []byte("3a9b3c0e-5d6f-4a1b-9c2d-7e8f9a0b1c2d")

// realFrames are the frames of an execute_request as jupyter_client sends
// it on shell (after the ROUTER added the identity), signed with wireKey.
func realFrames(t testing.TB) [][]byte {
	t.Helper()
	header := `{"msg_id": "5f3c1b2e-0d4a4b1e9c7f_1234_1", "msg_type": "execute_request", "username": "user", "session": "5f3c1b2e-0d4a4b1e9c7f", "date": "2026-11-29T22:00:00.123456Z", "version": "5.3"}`
	content := `{"code": "SELECT 1", "silent": false, "store_history": true, "user_expressions": {}, "allow_stdin": true, "stop_on_error": true}`
	msg := [][]byte{[]byte(header), []byte("{}"), []byte("{}"), []byte(content)}
	sig := sign(wireKey, msg[0], msg[1], msg[2], msg[3])
	hexSig := make([]byte, 2*len(sig))
	const digits = "0123456789abcdef"
	for i, b := range sig {
		hexSig[2*i], hexSig[2*i+1] = digits[b>>4], digits[b&15]
	}
	return append([][]byte{[]byte("client-identity"), []byte("<IDS|MSG>"), hexSig}, msg...)
}

func TestDecode(t *testing.T) {
	m, err := Decode(realFrames(t), wireKey)
	if err != nil {
		t.Fatalf("Decode = %v", err)
	}
	if got := string(m.Identities[0]); got != "client-identity" || len(m.Identities) != 1 {
		t.Errorf("identities = %q", m.Identities)
	}
	if m.Header.MsgType != "execute_request" || m.Header.Version != "5.3" || m.Header.Session != "5f3c1b2e-0d4a4b1e9c7f" {
		t.Errorf("header = %+v", m.Header)
	}
	if m.Parent != (Header{}) {
		t.Errorf("parent = %+v, want zero", m.Parent)
	}
	var req executeRequest
	if err := decodeContent(m, &req); err != nil || req.Code != "SELECT 1" || req.StoreHistory == nil || !*req.StoreHistory {
		t.Errorf("content = %+v, %v", req, err)
	}
}

func TestDecode_Errors(t *testing.T) {
	good := realFrames(t)
	with := func(i int, f []byte) [][]byte {
		out := append([][]byte{}, good...)
		out[i] = f
		return out
	}
	tests := []struct {
		name   string
		frames [][]byte
		key    []byte
		want   error
	}{
		{"empty", nil, wireKey, ErrNoDelimiter},
		{"no delimiter", [][]byte{[]byte("id"), []byte("x")}, wireKey, ErrNoDelimiter},
		{"delimiter only", [][]byte{[]byte("<IDS|MSG>")}, wireKey, ErrShortMessage},
		{"four frames", good[:6], wireKey, ErrShortMessage},
		{"wrong key", good, []byte("other"), ErrBadSignature},
		{"no signature", with(2, nil), wireKey, ErrBadSignature},
		{"signature not hex", with(2, []byte("zz")), wireKey, ErrBadSignature},
		{"tampered content", with(6, []byte(`{"code": "DROP"}`)), wireKey, ErrBadSignature},
		{"header not JSON", with(3, []byte("nope")), nil, ErrBadFrame},
		{"header an array", with(3, []byte("[]")), nil, ErrBadFrame},
		{"header without msg_type", with(3, []byte(`{"msg_id": "1"}`)), nil, ErrBadFrame},
		{"header with a number msg_type", with(3, []byte(`{"msg_type": 1}`)), nil, ErrBadFrame},
		{"parent not an object", with(4, []byte(`"x"`)), nil, ErrBadFrame},
		{"metadata not JSON", with(5, []byte("{")), nil, ErrBadFrame},
		{"content not an object", with(6, []byte("[1]")), nil, ErrBadFrame},
		{"content truncated", with(6, []byte(`{"code": `)), nil, ErrBadFrame},
	}
	for _, tc := range tests {
		t.Run(tc.name, func(t *testing.T) {
			_, err := Decode(tc.frames, tc.key)
			if !errors.Is(err, tc.want) {
				t.Errorf("Decode() = %v, want %v", err, tc.want)
			}
		})
	}
}

func TestEncodeDecodeRoundTrip(t *testing.T) {
	msg := Message{
		Identities: [][]byte{[]byte("a"), []byte("b")},
		Header:     Header{MsgID: "1", Session: "s", Username: "u", Date: "d", MsgType: "display_data", Version: "5.3"},
		Parent:     Header{MsgID: "0", MsgType: "execute_request"},
		Metadata:   map[string]any{"k": "v"},
		Content:    json.RawMessage(`{"data":{"text/plain":"x"}}`),
		Buffers:    [][]byte{{0, 1, 2}},
	}
	for _, key := range [][]byte{nil, wireKey} {
		frames, err := Encode(msg, key)
		if err != nil {
			t.Fatal(err)
		}
		got, err := Decode(frames, key)
		if err != nil {
			t.Fatalf("Decode(Encode()) = %v", err)
		}
		if !reflect.DeepEqual(got, msg) {
			t.Errorf("round trip:\n got %+v\nwant %+v", got, msg)
		}
		if key == nil && len(frames[3]) != 0 {
			t.Errorf("unsigned message has signature %q", frames[3])
		}
	}
	// Zero parent, nil metadata and content encode as {}.
	frames, err := Encode(Message{Header: Header{MsgType: "status"}}, nil)
	if err != nil {
		t.Fatal(err)
	}
	for i, f := range frames[3:] {
		if !bytes.Equal(f, []byte("{}")) {
			t.Errorf("frame %d = %s, want {}", i+3, f)
		}
	}
	if _, err := Encode(Message{Content: json.RawMessage("[1]")}, nil); !errors.Is(err, ErrBadFrame) {
		t.Errorf("Encode with array content = %v, want ErrBadFrame", err)
	}
}

// FuzzDecode checks that Decode never panics and that what it accepts
// survives Encode → Decode unchanged. Frames are joined with a 0xFF
// separator so that the fuzzer can vary their number.
func FuzzDecode(f *testing.F) {
	join := func(frames [][]byte) []byte { return bytes.Join(frames, []byte{0xff}) }
	f.Add(join(realFrames(f)), true)
	f.Add(join(realFrames(f)), false)
	for _, m := range []Message{
		{Header: Header{MsgID: "1", MsgType: "kernel_info_request", Version: "5.3"}},
		{Identities: [][]byte{[]byte("kernel.x.status")}, Header: Header{MsgID: "2", MsgType: "status"}, Parent: Header{MsgID: "1", MsgType: "execute_request"}, Content: json.RawMessage(`{"execution_state":"busy"}`)},
		{Header: Header{MsgType: "comm_msg"}, Content: json.RawMessage(`{"comm_id":"c","data":{}}`), Buffers: [][]byte{{1, 2}, nil}},
	} {
		frames, err := Encode(m, wireKey)
		if err != nil {
			f.Fatal(err)
		}
		f.Add(join(frames), true)
	}
	f.Add([]byte("<IDS|MSG>"), false)
	f.Add([]byte{0xff, 0xff}, false)
	f.Fuzz(func(t *testing.T, data []byte, signed bool) {
		frames := bytes.Split(data, []byte{0xff})
		var key []byte
		if signed {
			key = wireKey
		}
		m, err := Decode(frames, key)
		if err != nil {
			return
		}
		again, err := Encode(m, key)
		if err != nil {
			t.Fatalf("Encode(Decode()) = %v", err)
		}
		m2, err := Decode(again, key)
		if err != nil {
			t.Fatalf("Decode(Encode(Decode())) = %v", err)
		}
		if m2.Header != m.Header || m2.Parent != m.Parent || !bytes.Equal(m2.Content, m.Content) || len(m2.Identities) != len(m.Identities) {
			t.Fatalf("round trip changed the message:\n%+v\n%+v", m, m2)
		}
	})
}
