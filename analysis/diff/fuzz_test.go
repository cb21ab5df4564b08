package diff

import (
	"bytes"
	"compress/gzip"
	"io"
	"os"
	"path/filepath"
	"testing"
)

// FuzzDecodeInput: a diff's input (EncodeInput) reaches DecodeInput from a
// page anyone may have edited, so any bytes give an Input or an error, never
// a panic; and an Input it returns encodes again and decodes to the same
// encoding. Seeded with the golden diffs' inputs. Run: go test
// ./analysis/diff -fuzz FuzzDecodeInput.
func FuzzDecodeInput(f *testing.F) {
	seeds, err := filepath.Glob(filepath.Join("testdata", "golden", "*.input.msgpack.gz"))
	if err != nil || len(seeds) == 0 {
		f.Fatalf("no golden inputs to seed from (%v)", err)
	}
	for _, p := range seeds {
		gz, err := os.ReadFile(p)
		if err != nil {
			f.Fatal(err)
		}
		zr, err := gzip.NewReader(bytes.NewReader(gz))
		if err != nil {
			f.Fatal(err)
		}
		data, err := io.ReadAll(zr)
		if err != nil {
			f.Fatal(err)
		}
		f.Add(data)
	}
	f.Fuzz(func(t *testing.T, data []byte) {
		in, err := DecodeInput(data)
		if err != nil {
			return
		}
		enc, err := EncodeInput(in)
		if err != nil {
			t.Fatalf("a decoded input does not encode: %v", err)
		}
		again, err := DecodeInput(enc)
		if err != nil {
			t.Fatalf("a re-encoded input does not decode: %v", err)
		}
		enc2, err := EncodeInput(again)
		if err != nil || !bytes.Equal(enc, enc2) {
			t.Fatalf("the round trip changed the input (err %v)", err)
		}
	})
}
