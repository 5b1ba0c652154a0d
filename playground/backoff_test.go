package playground

import (
	"context"
	"testing"
)

// retryVerdicts extends TestRun_Verdicts with the outage scenarios: a
// handler that never calls the provider loses the charge; one that calls
// it fails until the provider is back.
// It is a function: the handlers of later files register in init.
func retryVerdicts() map[string]map[string]string {
	row := func(kv ...string) map[string]string {
		m := map[string]string{}
		for _, h := range Handlers() {
			m[h.Name] = VerdictLost
		}
		for i := 0; i < len(kv); i += 2 {
			m[kv[i]] = kv[i+1]
		}
		return m
	}
	// flow-restart books the amount before the charge fails, and books
	// it again on every retry.
	succeeds := row("charge-no-key", VerdictOK, "charge-key", VerdictOK, "charge-inbox", VerdictOK, "charge-outbox", VerdictOK,
		"flow-restart", VerdictDuplicate, "flow-phases", VerdictOK)
	return map[string]map[string]string{
		"outage-requeue": row("charge-no-key", VerdictDeadLettered, "charge-key", VerdictDeadLettered, "charge-inbox", VerdictDeadLettered,
			"charge-outbox", VerdictDeadLettered, "flow-restart", VerdictDuplicate, "flow-phases", VerdictDeadLettered),
		"outage-backoff": succeeds,
		"outage-jitter":  succeeds,
	}
}

func TestBackoff_DelaysGrow(t *testing.T) {
	tests := []struct {
		name string
		b    Backoff
		want []int64 // after attempts 1, 2, …
	}{
		{"immediate", Backoff{Policy: BackoffImmediate}, []int64{0, 0, 0}},
		{"fixed", Backoff{Policy: BackoffFixed, BaseTicks: 5}, []int64{5, 5, 5}},
		{"exponential", Backoff{Policy: BackoffExponential, BaseTicks: 5}, []int64{5, 10, 20, 40, 80}},
		{"exponential capped", Backoff{Policy: BackoffExponential, BaseTicks: 5, MaxTicks: 60}, []int64{5, 10, 20, 40, 60, 60}},
		{"no overflow", Backoff{Policy: BackoffExponential, BaseTicks: 1 << 40}, []int64{maxBackoffTicks, maxBackoffTicks}},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			for i, want := range tt.want {
				if got := tt.b.Delay("pay-1", 1, i+1); got != want {
					t.Errorf("attempt %d: delay %d, want %d", i+1, got, want)
				}
			}
		})
	}
}

// TestBackoff_JitterStaysInItsRange: full jitter draws from 0 to the
// delay, equal jitter from half of it; the same inputs give the same draw,
// and the messages of one wave do not all draw the same.
func TestBackoff_JitterStaysInItsRange(t *testing.T) {
	for _, jitter := range []string{JitterFull, JitterEqual} {
		t.Run(jitter, func(t *testing.T) {
			b := &Backoff{Policy: BackoffExponential, BaseTicks: 8, MaxTicks: 64, Jitter: jitter, Seed: 3}
			plain := &Backoff{Policy: BackoffExponential, BaseTicks: 8, MaxTicks: 64}
			for attempt := 1; attempt <= 6; attempt++ {
				d := plain.Delay("m", 1, attempt)
				lo := int64(0)
				if jitter == JitterEqual {
					lo = d - d/2
				}
				seen := map[int64]bool{}
				for _, id := range []string{"m-1", "m-2", "m-3", "m-4", "m-5", "m-6", "m-7", "m-8"} {
					got := b.Delay(id, 1, attempt)
					if got < lo || got > d {
						t.Errorf("attempt %d, %s: delay %d outside [%d, %d]", attempt, id, got, lo, d)
					}
					if again := b.Delay(id, 1, attempt); again != got {
						t.Errorf("attempt %d, %s: %d then %d for the same inputs", attempt, id, got, again)
					}
					seen[got] = true
				}
				if len(seen) < 2 {
					t.Errorf("attempt %d: eight messages drew one delay, %v", attempt, seen)
				}
			}
		})
	}
}

// attemptTicks lists, per message, the ticks of its deliveries.
func attemptTicks(ht *HandlerTrace) map[string][]int64 {
	out := map[string][]int64{}
	for _, st := range ht.Steps {
		if st.Kind == StepDeliver {
			out[st.Message] = append(out[st.Message], st.Tick)
		}
	}
	return out
}

func runOne(t *testing.T, scenario, handler, script string) *HandlerTrace {
	t.Helper()
	tr, err := Run(context.Background(), Request{Scenario: scenario, Handlers: []string{handler}, Script: script})
	if err != nil {
		t.Fatal(err)
	}
	return tr.Handlers[0]
}

// TestBackoff_RedeliveryWaitsOutTheDelay: each redelivery happens when the
// failed copy's delay ends, so the gaps between attempts double; with no
// delay, every attempt falls in the same tick and the delivery limit is
// spent during the outage.
func TestBackoff_RedeliveryWaitsOutTheDelay(t *testing.T) {
	tests := []struct {
		scenario string
		want     []int64
		verdict  string
	}{
		{"outage-requeue", []int64{0, 0, 0, 0, 0}, VerdictDeadLettered},
		{"outage-backoff", []int64{0, 5, 15, 35}, VerdictOK},
		{"outage-jitter", []int64{0, 4, 9, 28, 61}, VerdictOK},
	}
	for _, tt := range tests {
		t.Run(tt.scenario, func(t *testing.T) {
			ht := runOne(t, tt.scenario, "charge-key", "")
			if got := attemptTicks(ht)["pay-1"]; !equalTicks(got, tt.want) {
				t.Errorf("pay-1 delivered at ticks %v, want %v", got, tt.want)
			}
			if ht.Verdict != tt.verdict {
				t.Errorf("verdict %s, want %s", ht.Verdict, tt.verdict)
			}
			for _, st := range ht.Steps {
				if st.Kind == StepProvider && st.Error == "" && st.Tick < 30 {
					t.Errorf("step %d: a charge went through at tick %d, during the outage", st.Index, st.Tick)
				}
			}
		})
	}
}

func equalTicks(a, b []int64) bool {
	if len(a) != len(b) {
		return false
	}
	for i := range a {
		if a[i] != b[i] {
			return false
		}
	}
	return true
}

// TestBackoff_JitterSpreadsTheWaves: without jitter the three charges that
// failed together hit the provider together at every attempt; with it, no
// two retries share a tick.
func TestBackoff_JitterSpreadsTheWaves(t *testing.T) {
	perTick := func(ht *HandlerTrace) map[int64]int {
		n := map[int64]int{}
		for _, st := range ht.Steps {
			if st.Kind == StepProvider && st.Attempt > 1 {
				n[st.Tick]++
			}
		}
		return n
	}
	waves := perTick(runOne(t, "outage-backoff", "charge-key", ""))
	for tick, n := range waves {
		if n != 3 {
			t.Errorf("outage-backoff: %d calls at tick %d, want the three together", n, tick)
		}
	}
	spread := perTick(runOne(t, "outage-jitter", "charge-key", ""))
	for tick, n := range spread {
		if n != 1 {
			t.Errorf("outage-jitter: %d calls at tick %d, want one", n, tick)
		}
	}
	if len(spread) != 12 {
		t.Errorf("outage-jitter: retries at %d ticks, want 12", len(spread))
	}
}

// TestBackoff_LeaseEndThenDelay: a copy whose worker crashed waits for its
// lease to end and then for its delay; without a backoff (lost-ack) the
// redelivery waits for the lease only, as before.
func TestBackoff_LeaseEndThenDelay(t *testing.T) {
	ht := runOne(t, "outage-backoff", "charge-key", "advance 30; deliver pay-1 crash-before-ack; redeliver pay-1")
	if got := attemptTicks(ht)["pay-1"]; !equalTicks(got, []int64{30, 65}) {
		t.Errorf("pay-1 delivered at ticks %v, want [30 65] (a lease of 30, then 5)", got)
	}
	ht = runOne(t, "lost-ack", "dedupe-tx", "deliver msg-1 crash-before-ack; redeliver msg-1")
	if got := attemptTicks(ht)["msg-1"]; !equalTicks(got, []int64{0, 30}) {
		t.Errorf("lost-ack: msg-1 delivered at ticks %v, want [0 30]", got)
	}
}

// TestBackoff_StepsSayWhen: the broker's backoff step names the delay and
// when the copy is due, and the clock step of the redelivery moves there.
func TestBackoff_StepsSayWhen(t *testing.T) {
	ht := runOne(t, "outage-backoff", "charge-key", "deliver pay-2; redeliver pay-2")
	var notes []string
	for _, st := range ht.Steps {
		if st.Kind == StepBackoff || st.Kind == StepClock {
			notes = append(notes, st.Kind+": "+st.Note)
		}
	}
	want := []string{
		"backoff: attempt 1 failed: the broker holds pay-2 back for 5 seconds, until tick 5 (an exponential delay from 5 ticks, doubling up to 60)",
		"clock: the clock moves from tick 0 to 5: pay-2's backoff after attempt 1 ends, and the broker delivers it again",
		"backoff: attempt 2 failed: the broker holds pay-2 back for 10 seconds, until tick 15 (an exponential delay from 5 ticks, doubling up to 60)",
	}
	if len(notes) != len(want) {
		t.Fatalf("notes %q, want %q", notes, want)
	}
	for i := range want {
		if notes[i] != want[i] {
			t.Errorf("note %d: %q, want %q", i, notes[i], want[i])
		}
	}
}
