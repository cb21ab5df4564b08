package kernel

import "errors"

// Errors returned by Decode. Tests match them with errors.Is; the wrapped
// message says which frame or field was at fault.
var (
	// ErrNoDelimiter: the frames hold no "<IDS|MSG>" delimiter.
	ErrNoDelimiter = errors.New("no <IDS|MSG> delimiter")
	// ErrShortMessage: fewer than the five frames that follow the delimiter
	// (signature, header, parent header, metadata, content).
	ErrShortMessage = errors.New("fewer than 5 frames after the delimiter")
	// ErrBadSignature: the HMAC of the message does not match its signature.
	ErrBadSignature = errors.New("bad signature")
	// ErrBadFrame: a header, parent header, metadata or content frame is not
	// the JSON object the protocol requires.
	ErrBadFrame = errors.New("malformed frame")
	// ErrUnsupportedScheme: the connection file names a signature scheme
	// other than hmac-sha256.
	ErrUnsupportedScheme = errors.New("unsupported signature scheme")
)
