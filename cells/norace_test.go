//go:build !race

package cells_test

// interruptLimit is how soon an interrupted query or load must stop.
const interruptLimit = 1e9
