package admit

import (
	"syscall"
	"unsafe"
)

// threadCPU is the CPU time the calling OS thread has used (the caller
// holds runtime.LockOSThread): unlike wall time, it does not count the
// time other work had the core.
func threadCPU() (int64, bool) {
	const clockThreadCPUTimeID = 3
	var ts syscall.Timespec
	if _, _, errno := syscall.RawSyscall(syscall.SYS_CLOCK_GETTIME, clockThreadCPUTimeID, uintptr(unsafe.Pointer(&ts)), 0); errno != 0 {
		return 0, false
	}
	return ts.Nano(), true
}
