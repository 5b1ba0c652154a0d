package playground

import (
	"math/rand/v2"
	"testing"
)

// A frame's rows reuse the previous frame's tables that the event did not
// change: every case's trace is the same, byte for byte, as with every
// frame's rows rendered whole.
func TestRun_FrameRowsMatchWholeSnapshots(t *testing.T) {
	cases := poolCases(t)
	rng := rand.New(rand.NewPCG(16, 3))
	for _, sc := range Scenarios() {
		for range 4 {
			script := randomInterleaving(rng, sc)
			cases = append(cases, poolCase{sc.Name + "/" + script, Request{Scenario: sc.Name, Script: script, Seed: 5}})
		}
	}
	if testing.Short() {
		cases = cases[:len(cases)/4]
	}
	for _, c := range cases {
		reused := traceJSON(t, c)
		snapshotReuseOff = true
		whole := traceJSON(t, c)
		snapshotReuseOff = false
		if reused != whole {
			t.Fatalf("%s: the trace differs with whole snapshots\n got: %s\nwant: %s", c.name, reused, whole)
		}
	}
}
