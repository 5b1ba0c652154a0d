//go:build !linux

package playground

// Off Linux a thread's CPU clock is not read: statement deadlines fall back
// to wall-clock time.
func threadClock() (int32, bool)           { return 0, false }
func clockNanos(clock int32) (int64, bool) { return 0, false }
func threadCPU() (int64, bool)             { return 0, false }
