package table

import "testing"

// TestCompare: nil, bools, numbers, strings in that order; integers
// compared exactly above 2^53; strings by their bytes.
func TestCompare(t *testing.T) {
	for _, c := range []struct {
		a, b any
		want int
	}{
		{nil, nil, 0},
		{nil, false, -1},
		{true, false, 1},
		{false, int64(0), -1},
		{int64(5), "5", -1},
		{"10", "2", -1},
		{"Z", "a", -1},
		{int64(1) << 60, int64(1)<<60 + 1, -1},
		{int32(3), int64(3), 0},
		{int64(2), 2.5, -1},
		{3.5, int64(3), 1},
		{[]byte("b"), "a", 1},
	} {
		if got := Compare(c.a, c.b); got != c.want {
			t.Errorf("Compare(%v, %v) = %d, want %d", c.a, c.b, got, c.want)
		}
		if got := Compare(c.b, c.a); got != -c.want {
			t.Errorf("Compare(%v, %v) = %d, want %d", c.b, c.a, got, -c.want)
		}
	}
}
