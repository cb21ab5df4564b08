package host

import (
	"context"

	"github.com/tetratelabs/wazero/experimental"
)

// withGrowingMemory has the module's linear memory grow by doubling its
// capacity. wazero's own grows it to the exact size asked, reallocating
// and copying the whole memory whenever the slice's spare capacity runs
// out; the viewer grows its memory a little on most renders (it collects
// garbage only near a memory limit), and those copies were most of a
// re-render under wazero.
func withGrowingMemory(ctx context.Context) context.Context {
	return experimental.WithMemoryAllocator(ctx, experimental.MemoryAllocatorFunc(
		func(capacity, max uint64) experimental.LinearMemory {
			return &growingMemory{buf: make([]byte, 0, capacity), max: max}
		}))
}

// growingMemory is a linear memory whose capacity doubles (up to max).
type growingMemory struct {
	buf []byte
	max uint64
}

// Reallocate implements experimental.LinearMemory: the first size bytes,
// the new ones zero.
func (m *growingMemory) Reallocate(size uint64) []byte {
	if size > m.max {
		return nil
	}
	if size <= uint64(cap(m.buf)) {
		// Bytes past the old length were never handed out: still zero.
		m.buf = m.buf[:size]
		return m.buf
	}
	c := min(max(size, 2*uint64(cap(m.buf))), m.max)
	buf := make([]byte, size, c)
	copy(buf, m.buf)
	m.buf = buf
	return buf
}

// Free implements experimental.LinearMemory.
func (m *growingMemory) Free() { m.buf = nil }
