package evidence

import (
	"bytes"
	"os"
	"path/filepath"
	"reflect"
	"testing"

	"github.com/vmihailenco/msgpack/v5"
)

// FuzzDecode: a bundle comes from outside the process (a report's page, a
// notebook's output, a file a colleague sent), so Decode must return an
// error, never panic or allocate without bound, on any bytes; what it
// accepts must encode again and read back the same; and where decodeFast
// accepts the bytes, it must read them as the reflective decoding does.
// Seeded with the golden bundle (a real report's evidence) and its
// truncations. Run: go test ./analysis/evidence -fuzz FuzzDecode.
func FuzzDecode(f *testing.F) {
	golden, err := os.ReadFile(filepath.Join("testdata", "bundle.msgpack.golden"))
	if err != nil {
		f.Fatal(err)
	}
	f.Add(golden)
	f.Add(golden[:len(golden)/2])
	f.Add([]byte{0x80})                                                                   // an empty map
	f.Add([]byte{0x81, 0xa6, 't', 'a', 'b', 'l', 'e', 's', 0xdf, 0x7f, 0xff, 0xff, 0xff}) // a map header claiming 2^31 entries
	f.Fuzz(func(t *testing.T, data []byte) {
		b, err := Decode(data)
		if err != nil {
			return
		}
		enc, err := Encode(b)
		if err != nil {
			t.Fatalf("a decoded bundle does not encode: %v", err)
		}
		again, err := Decode(enc)
		if err != nil {
			t.Fatalf("a re-encoded bundle does not decode: %v", err)
		}
		enc2, err := Encode(again)
		if err != nil || !bytes.Equal(enc, enc2) {
			t.Fatalf("the round trip changed the bundle (err %v)", err)
		}
		if fast, ok := decodeFast(data); ok {
			dec := msgpack.NewDecoder(bytes.NewReader(data))
			dec.UseLooseInterfaceDecoding(true)
			var slow Bundle
			if err := dec.Decode(&slow); err != nil {
				t.Fatalf("decodeFast accepted what the reflective decoding refuses: %v", err)
			}
			normalizeTable(slow.Traces)
			for _, tb := range slow.Tables {
				normalizeTable(tb)
			}
			if !reflect.DeepEqual(fast, &slow) {
				t.Fatalf("decodeFast differs from the reflective decoding:\n fast %#v\n slow %#v", fast, &slow)
			}
		}
	})
}
