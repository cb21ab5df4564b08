package evidence

import "fmt"

// Park encodes the tables of b that hold more than minRows rows (Encode's
// msgpack) and drops their rows, for a while in which b must be kept but
// its rows are not read: a long job's per-step rows (the ops and kernels
// areas of 3,000 steps: about 420,000 rows, 140 MB of cells) would
// otherwise stay beside the cross-views of a large slice, which hold
// millions of GPU operations of their own. The returned func decodes the
// rows back into the same tables (Decode: the cell types table.Table
// documents, repeated strings shared, one array of cells per table); call
// it before anything reads them. Where the encoding fails, nothing is
// parked and the func does nothing.
func (b *Bundle) Park(minRows int) (unpark func() error) {
	none := func() error { return nil }
	if b == nil {
		return none
	}
	parked := &Bundle{SchemaVersion: SchemaVersion, Tables: Tables{}}
	for area, t := range b.Tables {
		if t != nil && len(t.Rows) > minRows {
			parked.Tables[area] = t
		}
	}
	if len(parked.Tables) == 0 {
		return none
	}
	data, err := Encode(parked)
	if err != nil {
		return none
	}
	for _, t := range parked.Tables {
		t.Rows = nil
	}
	return func() error {
		back, err := Decode(data)
		if err != nil {
			return fmt.Errorf("evidence: unparking the tables: %w", err)
		}
		for area, t := range parked.Tables {
			u := back.Tables[area]
			if u == nil || len(u.Columns) != len(t.Columns) {
				return fmt.Errorf("evidence: unparking the tables: %s did not come back", area)
			}
			t.Rows = u.Rows
		}
		return nil
	}
}
