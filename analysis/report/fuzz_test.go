package report

import (
	"bytes"
	"os"
	"path/filepath"
	"testing"
)

// FuzzDecodeSource: a report's source (EncodeSource) reaches DecodeSource
// from a page or a notebook output that anyone may have edited, so any bytes
// give a Source or an error, never a panic; and a Source it returns encodes
// again and decodes to the same encoding. Seeded with the sources of the
// golden reports. Run: go test ./analysis/report -fuzz FuzzDecodeSource.
func FuzzDecodeSource(f *testing.F) {
	seeds, err := filepath.Glob(filepath.Join("testdata", "golden", "*.source.msgpack"))
	if err != nil || len(seeds) == 0 {
		f.Fatalf("no golden sources to seed from (%v)", err)
	}
	for _, p := range seeds {
		data, err := os.ReadFile(p)
		if err != nil {
			f.Fatal(err)
		}
		f.Add(data)
	}
	f.Fuzz(func(t *testing.T, data []byte) {
		src, err := DecodeSource(data)
		if err != nil {
			return
		}
		enc, err := EncodeSource(src)
		if err != nil {
			t.Fatalf("a decoded source does not encode: %v", err)
		}
		again, err := DecodeSource(enc)
		if err != nil {
			t.Fatalf("a re-encoded source does not decode: %v", err)
		}
		enc2, err := EncodeSource(again)
		if err != nil || !bytes.Equal(enc, enc2) {
			t.Fatalf("the round trip changed the source (err %v)", err)
		}
	})
}
