//go:build race

package cells_test

// interruptLimit is how soon an interrupted query or load must stop. The
// race detector slows the engine several times, so it gets more time.
const interruptLimit = 3e9
