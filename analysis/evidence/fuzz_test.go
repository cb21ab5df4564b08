package evidence

import (
	"os"
	"path/filepath"
	"reflect"
	"testing"

	"github.com/tracebook/tracebook/internal/testutil"
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
		testutil.RoundTrip(t, data, Decode, Encode)
		if fast, ok := decodeFast(data); ok {
			if slow := decodeReflect(t, data); !reflect.DeepEqual(fast, slow) {
				t.Fatalf("decodeFast differs from the reflective decoding:\n fast %#v\n slow %#v", fast, slow)
			}
		}
	})
}
