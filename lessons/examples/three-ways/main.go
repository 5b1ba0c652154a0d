// How a finished job comes back, on a queue modelled on SQS: a receive hides
// the message for 30 s and hands out a fresh receipt handle; a delete removes
// the message only when it carries the newest handle, and answers "success"
// either way. The consumer credits 10 and then deletes. Each case plays one
// timeline on a clock that only moves forward.
package main

import "fmt"

const visibility = 30 // seconds, SQS's default visibility timeout

type queue struct {
	now       int  // seconds since the message was sent
	visibleAt int  // when a receive may hand the message out again
	receipts  int  // how many times it has been received; the newest handle
	deleted   bool // gone for good
}

func (q *queue) at(t int) {
	if t < q.now {
		panic("the clock ran backwards")
	}
	q.now = t
}

// receive hands the message out if it is visible, with a new handle.
func (q *queue) receive() (handle int, ok bool) {
	if q.deleted || q.now < q.visibleAt {
		return 0, false
	}
	q.receipts++
	q.visibleAt = q.now + visibility
	return q.receipts, true
}

// remove is DeleteMessage: only the newest handle deletes, even after the
// visibility timeout; an older one changes nothing, and the caller is not told.
func (q *queue) remove(handle int) {
	if handle == q.receipts {
		q.deleted = true
	}
}

func main() {
	cases := []struct {
		name string
		play func(q *queue, credit func())
	}{
		{"no fault", func(q *queue, credit func()) {
			h, _ := q.receive()
			credit()
			q.at(2)
			q.remove(h)
		}},
		{"killed before the delete", func(q *queue, credit func()) {
			q.receive()
			credit() // committed; the process dies at 2 s
		}},
		{"delete lost on the way", func(q *queue, credit func()) {
			q.receive()
			credit()
			q.at(2) // the DeleteMessage request never arrives
		}},
		{"slow, and B received it", func(q *queue, credit func()) {
			hA, _ := q.receive() // A starts a 45 s job
			q.at(31)
			hB, _ := q.receive() // visible again: B gets handle 2
			credit()             // B's credit
			q.at(33)
			q.remove(hB)
			q.at(45)
			credit()     // A's credit commits at last
			q.remove(hA) // a stale handle: "success", no effect
		}},
		{"slow, nobody else polled", func(q *queue, credit func()) {
			hA, _ := q.receive()
			q.at(45)
			credit()
			q.remove(hA) // the newest handle: deleted, although late
		}},
	}
	for _, c := range cases {
		q := &queue{}
		balance := 0
		credit := func() { balance += 10 }
		c.play(q, credit)
		// Any other consumer polls whenever the message is visible.
		for !q.deleted {
			q.at(max(q.now, q.visibleAt))
			h, _ := q.receive()
			credit()
			q.remove(h)
		}
		fmt.Printf("%-26s balance %d (expected 10)\n", c.name, balance)
	}
}

// Output:
// no fault                   balance 10 (expected 10)
// killed before the delete   balance 20 (expected 10)
// delete lost on the way     balance 20 (expected 10)
// slow, and B received it    balance 20 (expected 10)
// slow, nobody else polled   balance 10 (expected 10)
