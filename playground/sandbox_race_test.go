//go:build race

package playground

// raceDetector: the race detector slows SQLite several times over, so the
// sandbox's CPU-time bounds are not asserted under it.
const raceDetector = true
