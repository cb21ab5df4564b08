//go:build cgo

package duck

import (
	"context"
	"database/sql/driver"
	"errors"
	"fmt"
	"io"
	"math"
	"reflect"
	"strconv"
	"unsafe"

	"github.com/duckdb/duckdb-go/v2/mapping"

	"github.com/tracebook/tracebook/analysis/table"
)

// QueryEach reads a result a chunk at a time, column by column, straight
// from DuckDB's vectors (chunkCells), where the driver would box every
// value of every row into an interface and database/sql would convert it
// once more: the cross-view of the ×21 vLLM trace reads 2.9 M frames of
// ten columns. A result with a column of another type than chunkCells
// reads (a timestamp, a decimal, a list) goes through the driver's rows.
//
// The driver keeps the result it reads from unexported (its rows' res);
// resultOf finds it by reflection, and TestQueryEach fails when
// a driver upgrade moves it. Without it the rows go through the driver.

// eachCells hands the rows of rs (the driver's rows of a query) to each as
// Cells, and their columns to start unless nil. It closes rs.
func eachCells(ctx context.Context, rs driver.Rows, start func(columns []string) error, each func(row table.Cells) error) error {
	defer rs.Close()
	cols := rs.Columns()
	if start != nil {
		if err := start(cols); err != nil {
			return err
		}
	}
	res := resultOf(rs)
	var c *chunkCells
	if res != nil {
		c = newChunkCells(res)
	}
	if c == nil {
		return eachDriverRow(rs, len(cols), each)
	}
	return c.each(ctx, res, each)
}

// each hands every row of res's chunks to fn, a chunk at a time, until the
// result ends, fn fails or ctx is done. A result that ends in an error (a
// streamed one can fail between chunks) returns DuckDB's message.
//
// The next chunk is fetched while fn reads the current one: fetching a
// streamed result runs the query's last pipeline (a sort's merge, the
// projections above it), which then takes the other core instead of
// waiting for the reader (×21 vLLM, the cross-view's 2.9 M frames).
func (c *chunkCells) each(ctx context.Context, res *mapping.Result, fn func(row table.Cells) error) error {
	chunks := make(chan mapping.DataChunk, fetchAhead)
	done := make(chan struct{})
	fetched := make(chan struct{})
	go func() {
		defer close(fetched)
		defer close(chunks)
		for ctx.Err() == nil {
			ch := mapping.FetchChunk(*res)
			if ch.Ptr == nil {
				return
			}
			select {
			case chunks <- ch:
			case <-done:
				mapping.DestroyDataChunk(&ch)
				return
			}
		}
	}()
	// The result is destroyed once each returns: the fetching goroutine
	// must be done with it, and no chunk left undestroyed.
	defer func() {
		close(done)
		for ch := range chunks {
			mapping.DestroyDataChunk(&ch)
		}
		<-fetched
	}()
	for ch := range chunks {
		n := c.load(ch)
		var err error
		for c.row = 0; c.row < n && err == nil; c.row++ {
			err = fn(c)
		}
		c.unload(&ch)
		if err != nil {
			return err
		}
		if err := ctx.Err(); err != nil {
			return err
		}
	}
	if err := ctx.Err(); err != nil {
		return err
	}
	if msg := mapping.ResultError(res); msg != "" {
		return errors.New(msg)
	}
	return nil
}

// fetchAhead is how many chunks each fetches ahead of its reader.
const fetchAhead = 2

// eachDriverRow hands the rows of rs to each through the driver's Next,
// with Query's conversions (cell).
func eachDriverRow(rs driver.Rows, ncols int, each func(row table.Cells) error) error {
	vals := make([]driver.Value, ncols)
	row := make(table.Row, ncols)
	for {
		if err := rs.Next(vals); err != nil {
			if errors.Is(err, io.EOF) {
				return nil
			}
			return err
		}
		for i, v := range vals {
			row[i] = cell(v)
		}
		if err := each(row); err != nil {
			return err
		}
	}
}

// resultOf is the DuckDB result behind the driver's rows, nil when rs does
// not hold one where this build of the driver keeps it.
func resultOf(rs driver.Rows) *mapping.Result { return driverField[mapping.Result](rs, "res") }

// driverField is the field name of type T inside the driver's object v (a
// pointer to its struct), nil when this build of the driver keeps no such
// field there.
func driverField[T any](v any, name string) *T {
	rv := reflect.ValueOf(v)
	if rv.Kind() != reflect.Pointer || rv.Elem().Kind() != reflect.Struct {
		return nil
	}
	f := rv.Elem().FieldByName(name)
	if !f.IsValid() || f.Type() != reflect.TypeFor[T]() {
		return nil
	}
	return (*T)(unsafe.Pointer(f.UnsafeAddr()))
}

// chunkCells is the current row of a chunk of a result, as Cells.
type chunkCells struct {
	res  *mapping.Result // what tableCells reads from
	cols []chunkCol
	row  int
	// strs holds one Go copy of each distinct text read: the cross-view's
	// texts are a few kinds, names and threads repeated over every row.
	strs map[string]string
}

// chunkCol is one column of a chunk: its physical type, its data and its
// validity mask (nil: every row valid).
type chunkCol struct {
	typ   mapping.Type
	data  unsafe.Pointer
	valid unsafe.Pointer
	words []string // an ENUM's words by index
}

// newChunkCells returns the cells of res's chunks, nil when a column has a
// type they do not read.
func newChunkCells(res *mapping.Result) *chunkCells {
	n := int(mapping.ColumnCount(res))
	c := &chunkCells{cols: make([]chunkCol, n), strs: map[string]string{}}
	for i := range c.cols {
		lt := mapping.ColumnLogicalType(res, mapping.IdxT(i))
		typ := mapping.GetTypeId(lt)
		col := chunkCol{typ: typ}
		if typ == mapping.TypeEnum {
			col.typ = mapping.EnumInternalType(lt)
			size := mapping.EnumDictionarySize(lt)
			col.words = make([]string, size)
			for w := range col.words {
				col.words[w] = mapping.EnumDictionaryValue(lt, mapping.IdxT(w))
			}
		}
		mapping.DestroyLogicalType(&lt)
		if !readable(typ) {
			return nil
		}
		c.cols[i] = col
	}
	return c
}

// readable says whether chunkCells reads a column of type t.
func readable(t mapping.Type) bool {
	switch t {
	case mapping.TypeBoolean, mapping.TypeTinyInt, mapping.TypeSmallInt, mapping.TypeInteger, mapping.TypeBigInt,
		mapping.TypeUTinyInt, mapping.TypeUSmallInt, mapping.TypeUInteger, mapping.TypeUBigInt,
		mapping.TypeFloat, mapping.TypeDouble, mapping.TypeVarchar, mapping.TypeEnum:
		return true
	}
	return false
}

// load points the columns at chunk ch's vectors and returns its row count.
func (c *chunkCells) load(ch mapping.DataChunk) int {
	for i := range c.cols {
		vec := mapping.DataChunkGetVector(ch, mapping.IdxT(i))
		c.cols[i].data = mapping.VectorGetData(vec)
		c.cols[i].valid = mapping.VectorGetValidity(vec)
	}
	return int(mapping.DataChunkGetSize(ch))
}

// unload destroys chunk ch and forgets the columns' pointers into it. A
// pointer to freed C memory kept in a Go object is not harmless: once the
// allocator returns that address range to the system, the Go heap can grow
// into it, and the collector then finds the stale pointer in its own
// heap and stops the process ("found bad pointer in Go heap"; a reader of
// paged results keeps its cells between pages).
func (c *chunkCells) unload(ch *mapping.DataChunk) {
	for i := range c.cols {
		c.cols[i].data, c.cols[i].valid = nil, nil
	}
	mapping.DestroyDataChunk(ch)
}

func (c *chunkCells) Len() int { return len(c.cols) }

// null says whether the current row's cell of col is NULL.
func (c *chunkCells) null(col *chunkCol) bool {
	if col.valid == nil {
		return false
	}
	word := *(*uint64)(unsafe.Add(col.valid, c.row/64*8))
	return word>>(c.row%64)&1 == 0
}

// Int reads an integer cell; a float is truncated, a bool is 0 or 1, a
// text 0 (as table.Row's Int).
func (c *chunkCells) Int(i int) (int64, bool) {
	col := &c.cols[i]
	if c.null(col) {
		return 0, false
	}
	if col.words != nil {
		return 0, true
	}
	at := func(size uintptr) unsafe.Pointer { return unsafe.Add(col.data, uintptr(c.row)*size) }
	switch col.typ {
	case mapping.TypeBigInt:
		return *(*int64)(at(8)), true
	case mapping.TypeInteger:
		return int64(*(*int32)(at(4))), true
	case mapping.TypeSmallInt:
		return int64(*(*int16)(at(2))), true
	case mapping.TypeTinyInt:
		return int64(*(*int8)(at(1))), true
	case mapping.TypeUBigInt:
		u := *(*uint64)(at(8))
		if u > math.MaxInt64 {
			return int64(float64(u)), true
		}
		return int64(u), true
	case mapping.TypeUInteger:
		return int64(*(*uint32)(at(4))), true
	case mapping.TypeUSmallInt:
		return int64(*(*uint16)(at(2))), true
	case mapping.TypeUTinyInt:
		return int64(*(*uint8)(at(1))), true
	case mapping.TypeBoolean:
		if *(*bool)(at(1)) {
			return 1, true
		}
		return 0, true
	case mapping.TypeDouble:
		return int64(*(*float64)(at(8))), true
	case mapping.TypeFloat:
		return int64(*(*float32)(at(4))), true
	}
	return 0, true
}

// Str reads a text cell, one Go copy per distinct text; a number reads as
// its decimal text and a bool as true or false (as table.Row's Str).
func (c *chunkCells) Str(i int) (string, bool) {
	col := &c.cols[i]
	if c.null(col) {
		return "", false
	}
	switch {
	case col.words != nil:
		var w uint64
		switch col.typ {
		case mapping.TypeUTinyInt:
			w = uint64(*(*uint8)(unsafe.Add(col.data, c.row)))
		case mapping.TypeUSmallInt:
			w = uint64(*(*uint16)(unsafe.Add(col.data, c.row*2)))
		default:
			w = uint64(*(*uint32)(unsafe.Add(col.data, c.row*4)))
		}
		if w < uint64(len(col.words)) {
			return col.words[w], true
		}
		return "", false
	case col.typ == mapping.TypeVarchar:
		b := stringAt(col.data, c.row)
		if s, ok := c.strs[string(b)]; ok {
			return s, true
		}
		s := string(b)
		c.strs[s] = s
		return s, true
	case col.typ == mapping.TypeBoolean:
		return strconv.FormatBool(*(*bool)(unsafe.Add(col.data, c.row))), true
	case col.typ == mapping.TypeDouble:
		return fmt.Sprint(*(*float64)(unsafe.Add(col.data, c.row*8))), true
	case col.typ == mapping.TypeFloat:
		return fmt.Sprint(float64(*(*float32)(unsafe.Add(col.data, c.row*4)))), true
	case col.typ == mapping.TypeUBigInt:
		if u := *(*uint64)(unsafe.Add(col.data, c.row*8)); u > math.MaxInt64 {
			return fmt.Sprint(float64(u)), true
		}
	}
	v, _ := c.Int(i)
	return strconv.FormatInt(v, 10), true
}

// stringAt is the text of row i of a VARCHAR vector's data: DuckDB's
// string_t is 16 bytes, a uint32 length, then up to 12 bytes inline or a
// 4-byte prefix and a pointer to the text. The bytes are DuckDB's, valid
// while the chunk is.
func stringAt(data unsafe.Pointer, i int) []byte {
	p := unsafe.Add(data, i*16)
	n := *(*uint32)(p)
	if n <= 12 {
		return unsafe.Slice((*byte)(unsafe.Add(p, 4)), n)
	}
	return unsafe.Slice(*(**byte)(unsafe.Add(p, 8)), n)
}

// errNoCells says a connection is not the DuckDB driver's.
var errNoCells = fmt.Errorf("not a DuckDB connection")

// tableCells reads a result's chunks into a table's rows, with the values
// the driver and cell give (nil, bool, int64, float64 or string).
type tableCells struct {
	chunkCells
}

// newTableCells returns the reader of res's chunks into rows, nil when a
// column has a type chunkCells does not read, or an alias (JSON, which the
// driver decodes).
func newTableCells(res *mapping.Result) *tableCells {
	n := int(mapping.ColumnCount(res))
	for i := 0; i < n; i++ {
		lt := mapping.ColumnLogicalType(res, mapping.IdxT(i))
		alias := mapping.LogicalTypeGetAlias(lt)
		mapping.DestroyLogicalType(&lt)
		if alias != "" {
			return nil
		}
	}
	c := newChunkCells(res)
	if c == nil {
		return nil
	}
	c.res = res
	return &tableCells{*c}
}

// read appends the rows of the result to t, at most maxRows of them (all
// when maxRows <= 0); more says that rows remain.
func (c *tableCells) read(t *table.Table, maxRows int) (more bool, err error) {
	ncols := len(c.cols)
	var block []any
	for {
		ch := mapping.FetchChunk(*c.res)
		if ch.Ptr == nil {
			return false, nil
		}
		n := c.load(ch)
		for c.row = 0; c.row < n; c.row++ {
			if maxRows > 0 && len(t.Rows) >= maxRows {
				c.unload(&ch)
				return true, nil
			}
			if len(block) < ncols {
				block = make([]any, ncols*rowBlock)
			}
			row := block[:ncols:ncols]
			block = block[ncols:]
			for i := range c.cols {
				row[i] = c.value(i)
			}
			t.Rows = append(t.Rows, row)
		}
		c.unload(&ch)
	}
}

// value is the current row's cell of column i as the driver gives it,
// after cell: an ENUM's word, a text, a bool, an integer as int64 (an
// unsigned one past int64 as float64), a float as float64; nil for NULL.
func (c *tableCells) value(i int) any {
	col := &c.cols[i]
	if c.null(col) {
		return nil
	}
	if col.words != nil {
		s, _ := c.Str(i)
		return s
	}
	switch col.typ {
	case mapping.TypeVarchar:
		s, _ := c.Str(i)
		return s
	case mapping.TypeBoolean:
		return *(*bool)(unsafe.Add(col.data, c.row))
	case mapping.TypeDouble:
		return *(*float64)(unsafe.Add(col.data, c.row*8))
	case mapping.TypeFloat:
		return float64(*(*float32)(unsafe.Add(col.data, c.row*4)))
	case mapping.TypeUBigInt:
		if u := *(*uint64)(unsafe.Add(col.data, c.row*8)); u > math.MaxInt64 {
			return float64(u)
		}
	}
	v, _ := c.Int(i)
	return v
}
