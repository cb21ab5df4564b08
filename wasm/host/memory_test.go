package host

import (
	"bytes"
	"testing"
)

// TestGrowingMemory: a reallocation keeps the bytes written, gives zeros
// past them, doubles the capacity when it must move, and fails past max.
func TestGrowingMemory(t *testing.T) {
	m := &growingMemory{buf: make([]byte, 0, 4), max: 100}
	want := []byte("abc")
	copy(m.Reallocate(3), want)
	for _, size := range []uint64{4, 5, 9, 40, 40, 100} {
		got := m.Reallocate(size)
		if uint64(len(got)) != size || !bytes.Equal(got[:len(want)], want) ||
			!bytes.Equal(got[len(want):], make([]byte, len(got)-len(want))) {
			t.Fatalf("Reallocate(%d) = %q, want %q then zeros", size, got, want)
		}
		if c := cap(got); c > 100 || (size == 5 && c != 8) {
			t.Errorf("Reallocate(%d): capacity %d", size, c)
		}
		got[len(got)-1] = 'z' // the module writes its new memory
		want = append(bytes.Clone(got[:len(got)-1]), 'z')
	}
	if m.Reallocate(101) != nil {
		t.Error("Reallocate past max succeeded")
	}
}
