package report

import (
	"path/filepath"
	"testing"

	"github.com/tracebook/tracebook/internal/testutil"
)

// FuzzDecodeSource: a report's source (EncodeSource) reaches DecodeSource
// from a page or a notebook output that anyone may have edited, so any bytes
// give a Source or an error, never a panic; and a Source it returns encodes
// again and decodes to the same encoding. Seeded with the sources of the
// golden reports. Run: go test ./analysis/report -fuzz FuzzDecodeSource.
func FuzzDecodeSource(f *testing.F) {
	testutil.AddSeeds(f, filepath.Join("testdata", "golden", "*.source.msgpack"))
	f.Fuzz(func(t *testing.T, data []byte) {
		testutil.RoundTrip(t, data, DecodeSource, EncodeSource)
	})
}
