package gctune

import (
	"runtime/debug"
	"testing"
)

func TestApply_SetsTheDefaultsUnlessTheEnvironmentDoes(t *testing.T) {
	// What the runtime is running with before Apply (when GOGC or
	// GOMEMLIMIT is set, the runtime read it at start).
	const runningPercent, runningLimit = 123, 5 << 30
	for _, tc := range []struct {
		name, gogc, limit string
		wantPercent       int
		wantLimit         int64
		wantFromEnv       bool
	}{
		{name: "defaults", wantPercent: Percent, wantLimit: MemoryLimit},
		{name: "GOGC set", gogc: "123", wantPercent: runningPercent, wantLimit: MemoryLimit, wantFromEnv: true},
		{name: "GOMEMLIMIT set", limit: "5GiB", wantPercent: Percent, wantLimit: runningLimit, wantFromEnv: true},
	} {
		t.Run(tc.name, func(t *testing.T) {
			t.Setenv("GOGC", tc.gogc)
			t.Setenv("GOMEMLIMIT", tc.limit)
			defer debug.SetGCPercent(debug.SetGCPercent(runningPercent))
			defer debug.SetMemoryLimit(debug.SetMemoryLimit(runningLimit))

			s, restore := Apply()
			if s.Percent != tc.wantPercent || s.MemoryLimit != tc.wantLimit || s.FromEnv != tc.wantFromEnv {
				t.Errorf("settings %+v, want GOGC %d, limit %d, from env %v", s, tc.wantPercent, tc.wantLimit, tc.wantFromEnv)
			}
			if got := gcPercent(); got != tc.wantPercent {
				t.Errorf("GOGC in effect %d, want %d", got, tc.wantPercent)
			}
			if got := debug.SetMemoryLimit(-1); got != tc.wantLimit {
				t.Errorf("memory limit in effect %d, want %d", got, tc.wantLimit)
			}
			restore()
			if got, limit := gcPercent(), debug.SetMemoryLimit(-1); got != runningPercent || limit != runningLimit {
				t.Errorf("restored GOGC %d and limit %d, want %d and %d", got, limit, runningPercent, runningLimit)
			}
		})
	}
}

func gcPercent() int {
	p := debug.SetGCPercent(-1)
	debug.SetGCPercent(p)
	return p
}
