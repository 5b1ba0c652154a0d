//go:build !linux

package playground

func threadCPU() (int64, bool) { return 0, false }
