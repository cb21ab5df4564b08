package kernel

import (
	"bytes"
	"crypto/hmac"
	"crypto/sha256"
	"encoding/hex"
	"encoding/json"
	"fmt"
)

// ProtocolVersion is the Jupyter messaging protocol version this kernel
// speaks; it goes in every header it sends and in kernel_info_reply.
const ProtocolVersion = "5.3"

// delimiter separates the routing identities from the message proper.
//
// Spec: https://jupyter-client.readthedocs.io/en/latest/messaging.html#the-wire-protocol
var delimiter = []byte("<IDS|MSG>")

// Header is a message header, and also the parent header of a reply.
//
// Spec: https://jupyter-client.readthedocs.io/en/latest/messaging.html#message-header
type Header struct {
	MsgID    string `json:"msg_id"`
	Session  string `json:"session"`
	Username string `json:"username"`
	Date     string `json:"date"`
	MsgType  string `json:"msg_type"`
	Version  string `json:"version"`
}

// Message is one decoded Jupyter message.
//
// Content is kept as raw JSON: decodeContent turns it into the typed struct
// of its msg_type (see messages.go). Parent is the zero Header when the
// message has no parent (the wire form is then "{}").
//
// Spec: https://jupyter-client.readthedocs.io/en/latest/messaging.html#general-message-format
type Message struct {
	// Identities are the routing frames before the delimiter; for iopub
	// messages the single frame is the topic.
	Identities [][]byte
	Header     Header
	Parent     Header
	Metadata   map[string]any
	Content    json.RawMessage
	// Buffers are the optional raw data frames after the content.
	Buffers [][]byte
}

// Decode parses the multipart frames of one message and, when key is not
// empty, checks its HMAC-SHA256 signature in constant time.
//
// Decode never panics: every index is checked, and a malformed message gives
// an error that wraps ErrNoDelimiter, ErrShortMessage, ErrBadSignature or
// ErrBadFrame. Decode keeps references to the frames; it does not copy them.
func Decode(frames [][]byte, key []byte) (Message, error) {
	var msg Message
	d := -1
	for i, f := range frames {
		if bytes.Equal(f, delimiter) {
			d = i
			break
		}
	}
	if d < 0 {
		return msg, ErrNoDelimiter
	}
	rest := frames[d+1:]
	if len(rest) < 5 {
		return msg, fmt.Errorf("%w: got %d", ErrShortMessage, len(rest))
	}
	sig, header, parent, metadata, content := rest[0], rest[1], rest[2], rest[3], rest[4]
	if len(key) > 0 {
		want := sign(key, header, parent, metadata, content)
		got := make([]byte, hex.DecodedLen(len(sig)))
		n, err := hex.Decode(got, sig)
		if err != nil || !hmac.Equal(got[:n], want) {
			return msg, ErrBadSignature
		}
	}
	if err := decodeObject(header, &msg.Header); err != nil {
		return msg, fmt.Errorf("%w: header: %v", ErrBadFrame, err)
	}
	if msg.Header.MsgType == "" {
		return msg, fmt.Errorf("%w: header: empty msg_type", ErrBadFrame)
	}
	if err := decodeObject(parent, &msg.Parent); err != nil {
		return msg, fmt.Errorf("%w: parent header: %v", ErrBadFrame, err)
	}
	if err := decodeObject(metadata, &msg.Metadata); err != nil {
		return msg, fmt.Errorf("%w: metadata: %v", ErrBadFrame, err)
	}
	if !isObject(content) || !json.Valid(content) {
		return msg, fmt.Errorf("%w: content is not a JSON object", ErrBadFrame)
	}
	msg.Content = json.RawMessage(content)
	if d > 0 {
		msg.Identities = frames[:d]
	}
	if len(rest) > 5 {
		msg.Buffers = rest[5:]
	}
	return msg, nil
}

// Encode returns the frames of msg, signed with key when key is not empty:
// identities, delimiter, signature, header, parent header, metadata, content,
// buffers. Nil metadata or content encode as {}.
func Encode(msg Message, key []byte) ([][]byte, error) {
	header, err := json.Marshal(msg.Header)
	if err != nil {
		return nil, fmt.Errorf("encode header: %w", err)
	}
	parent := []byte("{}")
	if msg.Parent != (Header{}) {
		if parent, err = json.Marshal(msg.Parent); err != nil {
			return nil, fmt.Errorf("encode parent header: %w", err)
		}
	}
	metadata := []byte("{}")
	if msg.Metadata != nil {
		if metadata, err = json.Marshal(msg.Metadata); err != nil {
			return nil, fmt.Errorf("encode metadata: %w", err)
		}
	}
	content := []byte("{}")
	if len(msg.Content) > 0 {
		if !isObject(msg.Content) || !json.Valid(msg.Content) {
			return nil, fmt.Errorf("encode content: %w: not a JSON object", ErrBadFrame)
		}
		content = msg.Content
	}
	var sig []byte
	if len(key) > 0 {
		mac := sign(key, header, parent, metadata, content)
		sig = make([]byte, hex.EncodedLen(len(mac)))
		hex.Encode(sig, mac)
	}
	frames := make([][]byte, 0, len(msg.Identities)+6+len(msg.Buffers))
	frames = append(frames, msg.Identities...)
	frames = append(frames, delimiter, sig, header, parent, metadata, content)
	frames = append(frames, msg.Buffers...)
	return frames, nil
}

// sign is the HMAC-SHA256 of the four signed frames, in wire order.
func sign(key []byte, header, parent, metadata, content []byte) []byte {
	mac := hmac.New(sha256.New, key)
	mac.Write(header)
	mac.Write(parent)
	mac.Write(metadata)
	mac.Write(content)
	return mac.Sum(nil)
}

// decodeObject unmarshals b into v, requiring a JSON object.
func decodeObject(b []byte, v any) error {
	if !isObject(b) {
		return fmt.Errorf("not a JSON object")
	}
	return json.Unmarshal(b, v)
}

// isObject reports whether b starts, after white space, with '{'.
func isObject(b []byte) bool {
	b = bytes.TrimLeft(b, " \t\r\n")
	return len(b) > 0 && b[0] == '{'
}
