package evidence

import (
	"bytes"
	"encoding/binary"
	"math"

	"github.com/vmihailenco/msgpack/v5"

	"github.com/tracebook/tracebook/analysis/table"
)

// decodeFast reads a bundle the way Decode's reflective msgpack decoding
// does, with the evidence tables (nearly all of a bundle's bytes) read by a
// small parser over the bytes instead: cells straight into the types of
// table.Table, rows sliced from one array per table, repeated strings
// shared. Every other field is handed to the msgpack library as before.
// It returns false on anything it does not read the same way (an unknown
// field, a struct written as an array, a cell that is a map, an array or an
// extension, malformed input); Decode then takes the reflective path, which
// also reports the error. The viewer decodes the bundle on every report it
// opens, and in WebAssembly the reflective path took about a second for an
// 8-rank x 1,000-step job.
func decodeFast(data []byte) (*Bundle, bool) {
	r := &mpReader{b: data, strs: map[string]string{}, cells: map[string]any{}}
	n, ok := r.mapLen()
	if !ok || n < 0 {
		return nil, false
	}
	var b Bundle
	for i := 0; i < n; i++ {
		key, ok := r.str()
		if !ok {
			return nil, false
		}
		switch key {
		case "traces":
			if b.Traces, ok = r.table(); !ok {
				return nil, false
			}
		case "tables":
			if b.Tables, ok = r.tables(); !ok {
				return nil, false
			}
		case "schema_version":
			ok = r.lib(&b.SchemaVersion)
		case "filter":
			ok = r.lib(&b.Filter)
		case "gaps":
			ok = r.lib(&b.Gaps)
		case "findings":
			ok = r.lib(&b.Findings)
		case "context":
			ok = r.lib(&b.Context)
		case "thresholds":
			ok = r.lib(&b.Thresholds)
		default:
			return nil, false
		}
		if !ok {
			return nil, false
		}
	}
	if r.i != len(r.b) {
		return nil, false
	}
	return &b, true
}

// mpReader reads msgpack from a byte slice.
type mpReader struct {
	b     []byte
	i     int
	strs  map[string]string // strings read so far, to share equal ones
	cells map[string]any    // string cells read so far, boxed once
}

// lib decodes the next value into v with the msgpack library, configured
// as Decode configures it.
func (r *mpReader) lib(v any) bool {
	start := r.i
	if !r.skip(0) {
		return false
	}
	dec := msgpack.NewDecoder(bytes.NewReader(r.b[start:r.i]))
	dec.UseLooseInterfaceDecoding(true)
	return dec.Decode(v) == nil
}

func (r *mpReader) need(n int) bool { return n >= 0 && len(r.b)-r.i >= n }

func (r *mpReader) u8() (byte, bool) {
	if !r.need(1) {
		return 0, false
	}
	c := r.b[r.i]
	r.i++
	return c, true
}

// uint reads an n-byte big-endian unsigned integer.
func (r *mpReader) uint(n int) (uint64, bool) {
	if !r.need(n) {
		return 0, false
	}
	p := r.b[r.i : r.i+n]
	r.i += n
	switch n {
	case 1:
		return uint64(p[0]), true
	case 2:
		return uint64(binary.BigEndian.Uint16(p)), true
	case 4:
		return uint64(binary.BigEndian.Uint32(p)), true
	}
	return binary.BigEndian.Uint64(p), true
}

// length reads the length that follows a code of the str, bin, array or
// map families (fix forms excluded). A length past the bytes that remain
// is refused: a byte of a str or bin, an element of an array or a map
// takes at least one, so what is read after a length never holds more
// than the input does.
func (r *mpReader) length(size int) (int, bool) {
	n, ok := r.uint(size)
	if !ok || n > uint64(len(r.b)-r.i) {
		return 0, false
	}
	return int(n), true
}

// mapLen reads a map header: -1 for nil.
func (r *mpReader) mapLen() (int, bool) {
	c, ok := r.u8()
	switch {
	case !ok:
		return 0, false
	case c >= 0x80 && c <= 0x8f:
		return int(c & 0x0f), true
	case c == 0xc0:
		return -1, true
	case c == 0xde:
		return r.length(2)
	case c == 0xdf:
		return r.length(4)
	}
	return 0, false
}

// arrayLen reads an array header: -1 for nil.
func (r *mpReader) arrayLen() (int, bool) {
	c, ok := r.u8()
	switch {
	case !ok:
		return 0, false
	case c >= 0x90 && c <= 0x9f:
		return int(c & 0x0f), true
	case c == 0xc0:
		return -1, true
	case c == 0xdc:
		return r.length(2)
	case c == 0xdd:
		return r.length(4)
	}
	return 0, false
}

// strBytes reads a str or bin value's bytes (the library reads both as a
// string).
func (r *mpReader) strBytes(c byte) ([]byte, bool) {
	var n int
	ok := true
	switch {
	case c >= 0xa0 && c <= 0xbf:
		n = int(c & 0x1f)
	case c == 0xd9 || c == 0xc4:
		n, ok = r.length(1)
	case c == 0xda || c == 0xc5:
		n, ok = r.length(2)
	case c == 0xdb || c == 0xc6:
		n, ok = r.length(4)
	default:
		return nil, false
	}
	if !ok || !r.need(n) {
		return nil, false
	}
	p := r.b[r.i : r.i+n]
	r.i += n
	return p, true
}

// str reads a string (a struct field's name or value).
func (r *mpReader) str() (string, bool) {
	c, ok := r.u8()
	if !ok {
		return "", false
	}
	p, ok := r.strBytes(c)
	if !ok {
		return "", false
	}
	return r.intern(p), true
}

func (r *mpReader) intern(p []byte) string {
	if len(p) == 0 {
		return ""
	}
	if s, ok := r.strs[string(p)]; ok {
		return s
	}
	s := string(p)
	r.strs[s] = s
	return s
}

// int64 reads an integer field (int64 in the struct): the codes the
// encoder writes for one.
func (r *mpReader) int64() (int64, bool) {
	c, ok := r.u8()
	if !ok {
		return 0, false
	}
	switch {
	case c <= 0x7f || c >= 0xe0:
		return int64(int8(c)), true
	case c >= 0xcc && c <= 0xcf:
		u, ok := r.uint(1 << (c - 0xcc))
		return int64(u), ok
	case c >= 0xd0 && c <= 0xd3:
		return r.signed(1 << (c - 0xd0))
	}
	return 0, false
}

func (r *mpReader) signed(n int) (int64, bool) {
	u, ok := r.uint(n)
	switch n {
	case 1:
		return int64(int8(u)), ok
	case 2:
		return int64(int16(u)), ok
	case 4:
		return int64(int32(u)), ok
	}
	return int64(u), ok
}

// cell reads a table cell as the reflective path leaves it after
// normalizeTable: nil, bool, int64, float64 or string.
func (r *mpReader) cell() (any, bool) {
	c, ok := r.u8()
	if !ok {
		return nil, false
	}
	switch {
	case c <= 0x7f || c >= 0xe0:
		return int64(int8(c)), true
	case c >= 0xa0 && c <= 0xbf, c >= 0xd9 && c <= 0xdb, c >= 0xc4 && c <= 0xc6:
		p, ok := r.strBytes(c)
		if !ok {
			return nil, false
		}
		if v, ok := r.cells[string(p)]; ok {
			return v, true
		}
		var v any = r.intern(p)
		r.cells[v.(string)] = v
		return v, true
	}
	switch c {
	case 0xc0:
		return nil, true
	case 0xc2:
		return false, true
	case 0xc3:
		return true, true
	case 0xca:
		u, ok := r.uint(4)
		return float64(math.Float32frombits(uint32(u))), ok
	case 0xcb:
		u, ok := r.uint(8)
		return math.Float64frombits(u), ok
	case 0xcc, 0xcd, 0xce, 0xcf:
		u, ok := r.uint(1 << (c - 0xcc))
		if !ok {
			return nil, false
		}
		// As table.Normalize maps a uint64.
		if u <= math.MaxInt64 {
			return int64(u), true
		}
		return float64(u), true
	case 0xd0, 0xd1, 0xd2, 0xd3:
		v, ok := r.signed(1 << (c - 0xd0))
		return v, ok
	}
	return nil, false
}

// tables reads the Tables map.
func (r *mpReader) tables() (Tables, bool) {
	n, ok := r.mapLen()
	if !ok {
		return nil, false
	}
	if n < 0 {
		return nil, true
	}
	m := make(Tables, n)
	for i := 0; i < n; i++ {
		k, ok := r.str()
		if !ok {
			return nil, false
		}
		t, ok := r.table()
		if !ok {
			return nil, false
		}
		m[k] = t
	}
	return m, true
}

// table reads a *table.Table written as a map of its fields.
func (r *mpReader) table() (*table.Table, bool) {
	n, ok := r.mapLen()
	if !ok {
		return nil, false
	}
	if n < 0 {
		return nil, true
	}
	t := &table.Table{}
	for i := 0; i < n; i++ {
		k, ok := r.str()
		if !ok {
			return nil, false
		}
		switch k {
		case "name":
			t.Name, ok = r.str()
		case "columns":
			t.Columns, ok = r.columns()
		case "rows":
			t.Rows, ok = r.rows()
		case "total":
			t.Total, ok = r.int64()
		default:
			ok = r.skip(0)
		}
		if !ok {
			return nil, false
		}
	}
	return t, true
}

func (r *mpReader) columns() ([]table.Column, bool) {
	n, ok := r.arrayLen()
	if !ok {
		return nil, false
	}
	if n < 0 {
		return nil, true
	}
	cols := make([]table.Column, n)
	for i := range cols {
		m, ok := r.mapLen()
		if !ok || m < 0 {
			return nil, false
		}
		c := &cols[i]
		for j := 0; j < m; j++ {
			k, ok := r.str()
			if !ok {
				return nil, false
			}
			switch k {
			case "name":
				c.Name, ok = r.str()
			case "type":
				c.Type, ok = r.str()
			case "unit":
				c.Unit, ok = r.str()
			case "doc":
				c.Doc, ok = r.str()
			default:
				ok = r.skip(0)
			}
			if !ok {
				return nil, false
			}
		}
	}
	return cols, true
}

// rows reads the rows, all their cells in one backing array; each row is
// capped at its length, so appending to one copies it.
func (r *mpReader) rows() ([][]any, bool) {
	n, ok := r.arrayLen()
	if !ok {
		return nil, false
	}
	if n < 0 {
		return nil, true
	}
	rows := make([][]any, n)
	var cells []any
	for i := range rows {
		m, ok := r.arrayLen()
		if !ok {
			return nil, false
		}
		if m <= 0 {
			if m == 0 {
				rows[i] = []any{} // as the library leaves an empty row
			}
			continue // a nil row stays nil
		}
		if len(cells)+m > cap(cells) {
			// Room for this row and, guessing from it, the rest, but
			// never for more cells than bytes remain (a cell takes one
			// at least): the guess from a row's and the table's claimed
			// lengths once made 10 kB of input allocate 1 GB
			// (FuzzDecode).
			room := len(r.b) - r.i
			if n-i <= room/m {
				room = m * (n - i)
			}
			cells = make([]any, 0, max(room, m))
		}
		at := len(cells)
		for j := 0; j < m; j++ {
			v, ok := r.cell()
			if !ok {
				return nil, false
			}
			cells = append(cells, v)
		}
		rows[i] = cells[at:len(cells):len(cells)]
	}
	return rows, true
}

// maxNesting is how deep skip follows arrays and maps into each other: far
// more than a report's source holds (a call tree nests two levels for
// each of its frames, and --depth 0 keeps every frame of a stack as deep
// as Python's recursion limit), and a bound on skip's own recursion.
const maxNesting = 10_000

// skip moves past the next value.
func (r *mpReader) skip(depth int) bool {
	if depth > maxNesting {
		return false
	}
	c, ok := r.u8()
	if !ok {
		return false
	}
	switch {
	case c <= 0x7f || c >= 0xe0 || c == 0xc0 || c == 0xc2 || c == 0xc3:
		return true
	case c >= 0x80 && c <= 0x8f:
		return r.skipN(2*int(c&0x0f), depth)
	case c >= 0x90 && c <= 0x9f:
		return r.skipN(int(c&0x0f), depth)
	case c >= 0xa0 && c <= 0xbf, c >= 0xd9 && c <= 0xdb, c >= 0xc4 && c <= 0xc6:
		_, ok := r.strBytes(c)
		return ok
	}
	var n int
	switch c {
	case 0xca:
		n = 4
	case 0xcb:
		n = 8
	case 0xcc, 0xcd, 0xce, 0xcf:
		n = 1 << (c - 0xcc)
	case 0xd0, 0xd1, 0xd2, 0xd3:
		n = 1 << (c - 0xd0)
	case 0xd4, 0xd5, 0xd6, 0xd7, 0xd8: // fixext: type byte + 1..16 bytes
		n = 1 + 1<<(c-0xd4)
	case 0xc7, 0xc8, 0xc9: // ext: length, type byte, data
		l, ok := r.length(1 << (c - 0xc7))
		if !ok {
			return false
		}
		n = 1 + l
	case 0xdc, 0xdd:
		l, ok := r.length(2 << (c - 0xdc))
		return ok && r.skipN(l, depth)
	case 0xde, 0xdf:
		l, ok := r.length(2 << (c - 0xde))
		return ok && r.skipN(2*l, depth)
	default:
		return false
	}
	if !r.need(n) {
		return false
	}
	r.i += n
	return true
}

func (r *mpReader) skipN(n, depth int) bool {
	for k := 0; k < n; k++ {
		if !r.skip(depth + 1) {
			return false
		}
	}
	return true
}
