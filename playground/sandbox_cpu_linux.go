package playground

import "syscall"

// rusageThread is Linux's RUSAGE_THREAD: the calling thread only.
const rusageThread = 1

// threadCPU returns the CPU time the calling OS thread has used, in
// nanoseconds; the caller holds runtime.LockOSThread.
func threadCPU() (int64, bool) {
	var ru syscall.Rusage
	if err := syscall.Getrusage(rusageThread, &ru); err != nil {
		return 0, false
	}
	return ru.Utime.Nano() + ru.Stime.Nano(), true
}
