//go:build unix

package main

import "syscall"

// openFileLimit is the process's limit of open files (Go raises the soft
// limit to the hard one at start), or 0 when unknown or unlimited.
func openFileLimit() int {
	var rl syscall.Rlimit
	if err := syscall.Getrlimit(syscall.RLIMIT_NOFILE, &rl); err != nil || rl.Cur > 1<<30 {
		return 0
	}
	return int(rl.Cur)
}
