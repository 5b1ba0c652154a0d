package playground

import (
	"fmt"
	"hash/fnv"
	"math/rand/v2"
)

// Redelivery backoff. Without a Backoff (Settings.Backoff nil) a copy whose
// handler failed stays leased until its lease ends, as an SQS message whose
// consumer never answers does. With one, a failed handler gives the copy
// back at once (a nack; on SQS, ChangeMessageVisibility) and the broker
// holds it back for the policy's delay before any worker may receive it
// again; a copy whose lease ran out (a crash, a lost ack, a slow handler)
// is held back for the same delay after the lease's end. The delay grows
// with the number of failed deliveries of the copy:
//
//	immediate    0: RabbitMQ's basic.nack with requeue, handed straight back
//	fixed        BaseTicks every time
//	exponential  BaseTicks × 2^(n-1), capped at MaxTicks
//
// and Jitter spreads it: "full" draws the delay from 0 to the computed
// one, "equal" keeps half and draws the other half. The draw is a PCG
// generator seeded with Seed, the message id, the copy and the attempt, so
// a run stays a pure function of its request.
//
// deliver, start and redeliver of a copy that is held back move the clock
// to the end of its delay first (a redelivery already waits for a lease
// the same way), so the gaps between attempts show on the timeline.

// Backoff policies.
const (
	BackoffImmediate   = "immediate"
	BackoffFixed       = "fixed"
	BackoffExponential = "exponential"
)

// Jitter kinds.
const (
	JitterFull  = "full"
	JitterEqual = "equal"
)

// Backoff is a broker's delay before it delivers a failed copy again.
type Backoff struct {
	Policy    string `json:"policy"`
	BaseTicks int64  `json:"base_ticks,omitempty"`
	MaxTicks  int64  `json:"max_ticks,omitempty"` // the cap of exponential; 0: none
	Jitter    string `json:"jitter,omitempty"`    // "", JitterFull or JitterEqual
	Seed      uint64 `json:"seed,omitempty"`      // the jitter's
}

// maxBackoffTicks bounds any delay, whatever the settings say.
const maxBackoffTicks = maxAdvanceTicks

// Delay is how long the broker holds back copy (1 for the first) of
// message id after its failed delivery number attempt (1-based).
func (b *Backoff) Delay(id string, copy, attempt int) int64 {
	var d int64
	switch b.Policy {
	case BackoffFixed:
		d = b.BaseTicks
	case BackoffExponential:
		d = b.BaseTicks
		for i := 1; i < attempt && d < maxBackoffTicks; i++ {
			d *= 2
		}
		if b.MaxTicks > 0 {
			d = min(d, b.MaxTicks)
		}
	}
	d = min(max(d, 0), maxBackoffTicks)
	if d == 0 || b.Jitter == "" {
		return d
	}
	h := fnv.New64a()
	fmt.Fprintf(h, "%s/%d/%d", id, copy, attempt)
	r := rand.New(rand.NewPCG(b.Seed, h.Sum64()))
	if b.Jitter == JitterEqual {
		return d - d/2 + r.Int64N(d/2+1)
	}
	return r.Int64N(d + 1)
}

// String words the policy for a scenario's story and the step notes.
func (b *Backoff) String() string {
	var s string
	switch b.Policy {
	case BackoffImmediate:
		return "no delay: a failed message is handed straight back"
	case BackoffFixed:
		s = fmt.Sprintf("a fixed delay of %d ticks", b.BaseTicks)
	case BackoffExponential:
		s = fmt.Sprintf("an exponential delay from %d ticks, doubling", b.BaseTicks)
		if b.MaxTicks > 0 {
			s += fmt.Sprintf(" up to %d", b.MaxTicks)
		}
	default:
		return b.Policy
	}
	switch b.Jitter {
	case JitterFull:
		s += ", with full jitter"
	case JitterEqual:
		s += ", with equal jitter"
	}
	return s
}

// visibleAt is when the broker may hand out copy c again: the end of its
// lease, and with a backoff its delay after that. A copy never delivered,
// or one a worker holds, has none (0).
func (s *sim) visibleAt(c *brokerCopy) int64 {
	b := s.sc.Settings.Backoff
	if b == nil || c.deliveries == 0 || s.holder(c) != nil {
		return 0
	}
	return c.leaseEnd + b.Delay(c.m.ID, c.n, c.deliveries)
}

// backOff runs after a handler failed without acking (abort): with a
// backoff, the worker gives the copy back at once and the broker holds it
// back for its delay. It rewrites the abort step's note, which otherwise
// says the copy waits for its lease.
func (s *sim) backOff(c *brokerCopy, abortStep int) {
	b := s.sc.Settings.Backoff
	if b == nil || s.part != nil {
		return
	}
	c.leaseEnd = s.now
	d := b.Delay(c.m.ID, c.n, c.deliveries)
	if abortStep > 0 && abortStep <= len(s.steps) {
		s.steps[abortStep-1].Note = "the handler failed: it gives " + c.m.ID + " back to the broker without acking (a nack)"
	}
	note := fmt.Sprintf("attempt %d failed: the broker holds %s back for %s, until tick %d (%s)", c.deliveries, c.m.ID, s.ticks(d), s.now+d, b)
	if d == 0 {
		note = fmt.Sprintf("attempt %d failed: the broker hands %s straight back, to be delivered again at once", c.deliveries, c.m.ID)
	}
	s.record(Step{Kind: StepBackoff, Message: c.m.ID, Attempt: c.deliveries, Copy: c.label(), Note: note})
}

// waitOutBackoff moves the clock to the end of c's backoff when the broker
// still holds c back, before deliver, start or redeliver hands it out.
func (s *sim) waitOutBackoff(c *brokerCopy) {
	at := s.visibleAt(c)
	if at <= s.now {
		return
	}
	from := s.now
	s.now = at
	s.record(Step{Kind: StepClock, Message: c.m.ID, Copy: c.label(),
		Note: fmt.Sprintf("the clock moves from tick %d to %d: %s's backoff after attempt %d ends, and the broker delivers it again", from, at, c.m.ID, c.deliveries)})
	s.leasesRanOut(from)
}

// ticks words a number of ticks in the scenario's unit: "4 seconds".
func (s *sim) ticks(n int64) string {
	unit := s.sc.TickUnit
	if unit == "" {
		unit = "tick"
	}
	if n == 1 {
		return "1 " + unit
	}
	return fmt.Sprintf("%d %ss", n, unit)
}

// Outage makes the payment provider (provider.go) refuse every charge
// before tick UntilTick: a downstream system that is down, so that every
// attempt fails until it comes back.
type Outage struct {
	UntilTick int64 `json:"until_tick"`
}

// outageRefusal is the provider's answer to a charge during the outage,
// or "" when it is up.
func (s *sim) outageRefusal() string {
	o := s.sc.Outage
	if o == nil || s.now >= o.UntilTick {
		return ""
	}
	return fmt.Sprintf("503 Service Unavailable: the provider is down until tick %d", o.UntilTick)
}
