package diff

import (
	"path/filepath"
	"testing"

	"github.com/tracebook/tracebook/internal/testutil"
)

// FuzzDecodeInput: a diff's input (EncodeInput) reaches DecodeInput from a
// page anyone may have edited, so any bytes give an Input or an error, never
// a panic; and an Input it returns encodes again and decodes to the same
// encoding. Seeded with the golden diffs' inputs. Run: go test
// ./analysis/diff -fuzz FuzzDecodeInput.
func FuzzDecodeInput(f *testing.F) {
	testutil.AddSeeds(f, filepath.Join("testdata", "golden", "*.input.msgpack.gz"))
	f.Fuzz(func(t *testing.T, data []byte) {
		testutil.RoundTrip(t, data, DecodeInput, EncodeInput)
	})
}
