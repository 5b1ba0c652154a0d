package gctune

import (
	"testing"
)

func TestIdleWatch_FreesOnceAfterABusySpellGoesQuiet(t *testing.T) {
	frees := 0
	w := idleWatch{free: func() { frees++ }}
	const mb = 1 << 20
	for i, step := range []struct {
		allocated uint64
		wantFrees int
	}{
		{0, 0},          // first reading
		{100 * mb, 0},   // busy
		{200 * mb, 0},   // busy
		{200 * mb, 1},   // quiet after 200 MB: free
		{200 * mb, 1},   // still quiet: nothing new to free
		{200.5 * mb, 1}, // a little: not a busy spell
		{210 * mb, 1},   // busy, 10 MB since the free
		{210 * mb, 1},   // quiet, but under 16 MB since the free
		{240 * mb, 1},   // busy
		{240 * mb, 2},   // quiet after 40 MB: free
	} {
		w.tick(step.allocated)
		if frees != step.wantFrees {
			t.Fatalf("tick %d at %d MB: %d frees, want %d", i, step.allocated/mb, frees, step.wantFrees)
		}
	}
}
