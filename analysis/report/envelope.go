package report

import (
	"bytes"
	"encoding/binary"
	"fmt"

	"github.com/vmihailenco/msgpack/v5"

	"github.com/tracebook/tracebook/analysis/crossview"
	"github.com/tracebook/tracebook/analysis/evidence"
)

// decodeEnvelope decodes an EncodeSource envelope as the msgpack library
// decodes it into the envelope's struct, except that the bundle's bytes are
// sliced instead of copied: the library's []byte decoder copies a few
// megabytes in chunks, which the viewer module felt. ok is false when data
// is not an envelope of that layout; the caller then decodes it with the
// library. err is DecodeSource's error.
func decodeEnvelope(data []byte) (src *Source, ok bool, err error) {
	bb, rest, n, ok := splitEnvelope(data)
	if !ok {
		return nil, false, nil
	}
	dec := msgpack.NewDecoder(bytes.NewReader(rest))
	var cvs []*crossview.Result
	var windows []Window
	if err := dec.Decode(&cvs); err != nil {
		return nil, true, fmt.Errorf("report: decoding the source: %w", err)
	}
	if n == 3 {
		if err := dec.Decode(&windows); err != nil {
			return nil, true, fmt.Errorf("report: decoding the source: %w", err)
		}
	}
	b, err := evidence.Decode(bb)
	if err != nil {
		return nil, true, err
	}
	return &Source{Bundle: b, CrossViews: cvs, Windows: windows}, true, nil
}

// splitEnvelope returns the parts of an EncodeSource envelope, a msgpack
// array of 2 or 3 (n): the bundle's encoding (bin) and what follows it
// (the cross-views, then the windows), without copying.
func splitEnvelope(data []byte) (bundle, rest []byte, n int, ok bool) {
	if len(data) < 2 || (data[0] != 0x92 && data[0] != 0x93) {
		return nil, nil, 0, false
	}
	n = int(data[0] & 0x0f)
	var size, at int
	switch data[1] {
	case 0xc4: // bin 8
		if len(data) < 3 {
			return nil, nil, 0, false
		}
		size, at = int(data[2]), 3
	case 0xc5: // bin 16
		if len(data) < 4 {
			return nil, nil, 0, false
		}
		size, at = int(binary.BigEndian.Uint16(data[2:])), 4
	case 0xc6: // bin 32
		if len(data) < 6 {
			return nil, nil, 0, false
		}
		size, at = int(binary.BigEndian.Uint32(data[2:])), 6
	default:
		return nil, nil, 0, false
	}
	if size > len(data)-at {
		return nil, nil, 0, false
	}
	return data[at : at+size : at+size], data[at+size:], n, true
}
