// Three ways a finished job comes back: a tiny broker that leases one message,
// and a naive consumer that adds the amount to a balance and then acks.
// In every case the work is done, the broker never learns it, and it hands
// the message out again.
package main

import "fmt"

// broker leases a message to a consumer and forgets it only when an ack
// arrives before the lease ends.
type broker struct {
	now      int  // seconds
	leaseEnd int  // when the current lease runs out
	acked    bool // the message is gone for good
}

func (b *broker) lease(visibility int) {
	b.leaseEnd = b.now + visibility
}

// ack is refused once the lease has run out: by then the message may already
// belong to another consumer.
func (b *broker) ack() bool {
	if b.now > b.leaseEnd {
		return false
	}
	b.acked = true
	return true
}

type fault int

const (
	none fault = iota
	crashBeforeAck
	ackLost
	tooSlow
)

// run delivers the message until it is acked and returns the final balance.
func run(f fault) int {
	const visibility = 30 // seconds, SQS's default visibility timeout
	b := &broker{}
	balance := 0
	for attempt := 1; !b.acked; attempt++ {
		b.lease(visibility)
		balance += 10 // the work: a credit of 10
		first := attempt == 1
		switch {
		case first && f == crashBeforeAck:
			// The process dies here. Nothing is sent; the lease runs out.
		case first && f == ackLost:
			// The ack is sent, but the network drops it.
		case first && f == tooSlow:
			b.now += 45 // the handler took 45 s on a 30 s lease
			b.ack()     // refused: too late
		default:
			b.ack()
		}
		if !b.acked {
			b.now = b.leaseEnd + 1 // the broker waits out the lease, then redelivers
		}
	}
	return balance
}

func main() {
	for _, c := range []struct {
		name string
		f    fault
	}{
		{"no fault", none},
		{"crash before the ack", crashBeforeAck},
		{"ack lost on the network", ackLost},
		{"lease ran out first", tooSlow},
	} {
		fmt.Printf("%-24s balance %d (expected 10)\n", c.name, run(c.f))
	}
}

// Output:
// no fault                 balance 10 (expected 10)
// crash before the ack     balance 20 (expected 10)
// ack lost on the network  balance 20 (expected 10)
// lease ran out first      balance 20 (expected 10)
