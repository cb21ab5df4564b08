package evidence

import (
	"bytes"
	"fmt"
	"sort"

	"github.com/vmihailenco/msgpack/v5"

	"github.com/tracebook/tracebook/analysis/table"
)

// Encode returns the bundle's msgpack encoding. It is deterministic: map
// keys are sorted, struct fields keep their order, integers take their
// shortest form, so equal bundles encode to equal bytes and
// Encode(Decode(Encode(b))) equals Encode(b).
func Encode(b *Bundle) ([]byte, error) {
	var buf bytes.Buffer
	enc := msgpack.NewEncoder(&buf)
	enc.SetSortMapKeys(true)
	enc.UseCompactInts(true)
	if err := enc.Encode(b); err != nil {
		return nil, fmt.Errorf("evidence: encoding the bundle: %w", err)
	}
	return buf.Bytes(), nil
}

// Decode reads a bundle written by Encode. Table cells come back as the
// types table.Table documents (nil, bool, int64, float64, string). Bytes
// that are no bundle give an error: a bundle comes from outside the
// process (a report's page, a notebook's output), and the msgpack library
// panics on some malformed input (a struct field given twice, the second
// time over cells of another type: FuzzDecode), which Decode returns as
// an error instead.
func Decode(data []byte) (b *Bundle, err error) {
	defer func() {
		if p := recover(); p != nil {
			b, err = nil, fmt.Errorf("evidence: decoding the bundle: malformed input (%v)", p)
		}
	}()
	b, fast := decodeFast(data)
	if !fast {
		if err := CheckMsgpack(data); err != nil {
			return nil, fmt.Errorf("evidence: decoding the bundle: %w", err)
		}
		b = &Bundle{}
		dec := msgpack.NewDecoder(bytes.NewReader(data))
		dec.UseLooseInterfaceDecoding(true)
		if err := dec.Decode(b); err != nil {
			return nil, fmt.Errorf("evidence: decoding the bundle: %w", err)
		}
	}
	if b.SchemaVersion > SchemaVersion {
		return nil, fmt.Errorf("evidence: bundle schema version %d is newer than this reader's %d", b.SchemaVersion, SchemaVersion)
	}
	if !fast { // decodeFast leaves cells normalized
		normalizeTable(b.Traces)
		for _, t := range b.Tables {
			normalizeTable(t)
		}
	}
	if b.Tables == nil {
		b.Tables = Tables{}
	}
	if b.Context == nil {
		b.Context = map[string]string{}
	}
	if b.Thresholds == nil {
		b.Thresholds = Thresholds{}
	}
	return b, nil
}

// CheckMsgpack says whether data is one whole msgpack value, nested at most
// maxNesting deep, in which every length is backed by the bytes that follow it,
// which is what the msgpack library may be given: it sizes what it
// allocates by the lengths it reads, and a few bytes claiming a billion
// findings made it allocate gigabytes (FuzzDecode). decodeFast checks the
// parts it hands to the library the same way.
func CheckMsgpack(data []byte) error {
	r := &mpReader{b: data}
	if !r.skip(0) {
		return fmt.Errorf("malformed msgpack at byte %d of %d", r.i, len(data))
	}
	if r.i != len(data) {
		return fmt.Errorf("%d bytes after the msgpack value", len(data)-r.i)
	}
	return nil
}

// normalizeTable turns the integer and float types msgpack decodes into the
// cell types of table.Table.
func normalizeTable(t *table.Table) {
	if t == nil {
		return
	}
	for _, row := range t.Rows {
		for i, v := range row {
			row[i] = table.Normalize(v)
		}
	}
}

// Tables maps an area to its table. It encodes with its keys sorted (the
// msgpack library sorts only maps of strings, bools and interfaces).
type Tables map[string]*table.Table

// EncodeMsgpack writes the map with sorted keys.
func (m Tables) EncodeMsgpack(enc *msgpack.Encoder) error {
	return encodeSorted(enc, m, func(t *table.Table) error { return enc.Encode(t) })
}

// Thresholds maps a rule threshold's name to its value. It encodes with its
// keys sorted.
type Thresholds map[string]float64

// EncodeMsgpack writes the map with sorted keys.
func (m Thresholds) EncodeMsgpack(enc *msgpack.Encoder) error {
	return encodeSorted(enc, m, enc.EncodeFloat64)
}

// encodeSorted writes m as a msgpack map with its keys sorted, each value
// written by value (nil: msgpack's nil), so that equal maps encode to
// equal bytes.
func encodeSorted[V any](enc *msgpack.Encoder, m map[string]V, value func(V) error) error {
	if m == nil {
		return enc.EncodeNil()
	}
	if err := enc.EncodeMapLen(len(m)); err != nil {
		return err
	}
	for _, k := range sortedKeys(m) {
		if err := enc.EncodeString(k); err != nil {
			return err
		}
		if err := value(m[k]); err != nil {
			return err
		}
	}
	return nil
}

func sortedKeys[V any](m map[string]V) []string {
	keys := make([]string, 0, len(m))
	for k := range m {
		keys = append(keys, k)
	}
	sort.Strings(keys)
	return keys
}
