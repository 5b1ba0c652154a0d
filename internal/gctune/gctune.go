// Package gctune holds the garbage collector's settings of a serving
// process. A click allocates about 150 KB of short-lived memory (a run's
// rows and trace, the drawn answer, gzip's state) over a live heap of a few
// tens of MB (the run cache, pooled ledgers), so with Go's default GOGC=100
// the collector runs every hundred or so clicks and costs a fifth of a
// click's CPU. A higher GOGC makes it run a quarter as often; a soft memory
// limit keeps the heap bounded when the live heap grows (see
// https://go.dev/doc/gc-guide#Memory_limit). An operator's GOGC or
// GOMEMLIMIT environment variable wins.
package gctune

import (
	"os"
	"runtime/debug"
)

const (
	// Percent is the default GOGC of a serving process.
	Percent = 400
	// MemoryLimit is its default soft memory limit (GOMEMLIMIT): the
	// collector runs as often as it must to keep the Go heap under it.
	MemoryLimit = 384 << 20
)

// Settings are what Apply set, for the start-up log.
type Settings struct {
	Percent     int   // GOGC in effect
	MemoryLimit int64 // bytes; math.MaxInt64 when there is none
	FromEnv     bool  // GOGC or GOMEMLIMIT came from the environment
}

// Apply sets the serving defaults, each unless the environment sets it,
// and returns the settings in effect and a function that restores the
// previous ones (for benchmarks and tests).
func Apply() (Settings, func()) {
	prevPercent := debug.SetGCPercent(-1)
	debug.SetGCPercent(prevPercent)
	prevLimit := debug.SetMemoryLimit(-1)
	s := Settings{Percent: prevPercent, MemoryLimit: prevLimit}
	if os.Getenv("GOGC") == "" {
		debug.SetGCPercent(Percent)
		s.Percent = Percent
	} else {
		s.FromEnv = true
	}
	if os.Getenv("GOMEMLIMIT") == "" {
		debug.SetMemoryLimit(MemoryLimit)
		s.MemoryLimit = MemoryLimit
	} else {
		s.FromEnv = true
	}
	return s, func() {
		debug.SetGCPercent(prevPercent)
		debug.SetMemoryLimit(prevLimit)
	}
}
