package playground

import (
	"syscall"
	"unsafe"
)

// threadClock names the CPU clock of the calling OS thread, which another
// thread can read: Linux's MAKE_THREAD_CPUCLOCK(tid, CPUCLOCK_SCHED). The
// caller holds runtime.LockOSThread while the clock is in use.
func threadClock() (int32, bool) {
	tid := syscall.Gettid()
	return int32(^tid<<3 | 6), true
}

// threadCPU is the CPU time the calling OS thread has used: unlike wall
// time, it does not count the time other processes had the CPU. A raw
// system call (clock_gettime does not block): the scheduler is not told.
func threadCPU() (int64, bool) {
	const clockThreadCPUTimeID = 3
	var ts syscall.Timespec
	if _, _, errno := syscall.RawSyscall(syscall.SYS_CLOCK_GETTIME, clockThreadCPUTimeID, uintptr(unsafe.Pointer(&ts)), 0); errno != 0 {
		return 0, false
	}
	return ts.Nano(), true
}

// clockNanos reads a thread CPU clock from any thread.
func clockNanos(clock int32) (int64, bool) {
	var ts syscall.Timespec
	_, _, errno := syscall.Syscall(syscall.SYS_CLOCK_GETTIME, uintptr(clock), uintptr(unsafe.Pointer(&ts)), 0)
	if errno != 0 {
		return 0, false
	}
	return ts.Nano(), true
}
