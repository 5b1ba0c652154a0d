// Choosing a dedupe retention: list every path by which a copy of a message
// can still arrive, take the longest, and add a margin. Then check the choice
// against late copies.
package main

import (
	"fmt"
	"time"
)

const day = 24 * time.Hour

// window is one way a copy of a message can arrive late, and how late.
type window struct {
	source string
	within time.Duration // measured from when the message was first processed
}

// retention returns the shortest safe retention: the longest window plus a
// margin for clock skew, slow prune jobs and slow humans.
func retention(windows []window, margin time.Duration) (time.Duration, string) {
	var longest window
	for _, w := range windows {
		if w.within > longest.within {
			longest = w
		}
	}
	return longest.within + margin, longest.source
}

// human prints whole hours below a day and days above.
func human(d time.Duration) string {
	if d < day {
		return fmt.Sprintf("%dh", int(d.Hours()))
	}
	return fmt.Sprintf("%gd", d.Hours()/24)
}

func main() {
	// A payment webhook consumer. Figures are defaults at the time of writing.
	windows := []window{
		{"sender's automatic retries (Stripe, live mode)", 3 * day},
		{"a copy parked in our queue (SQS retention, set to its maximum)", 14 * day},
		{"redrive from our dead-letter queue after a fix", 14 * day},
		{"manual resend from the sender's events API", 30 * day},
	}
	keep, why := retention(windows, 5*day)
	fmt.Printf("retention: %s (longest window: %s)\n", human(keep), why)

	// Late copies, and whether each retention would still recognise them.
	late := []time.Duration{1 * time.Hour, 60 * time.Hour, 13 * day, 29 * day}
	fmt.Printf("%-9s", "copy at:")
	for _, age := range late {
		fmt.Printf(" %6s", human(age))
	}
	fmt.Println()
	for _, candidate := range []time.Duration{1 * day, 7 * day, keep} {
		fmt.Printf("keep %-4s", human(candidate))
		for _, age := range late {
			verdict := "skip"
			if age > candidate {
				verdict = "TWICE"
			}
			fmt.Printf(" %6s", verdict)
		}
		fmt.Println()
	}
}

// Output:
// retention: 35d (longest window: manual resend from the sender's events API)
// copy at:      1h   2.5d    13d    29d
// keep 1d     skip  TWICE  TWICE  TWICE
// keep 7d     skip   skip  TWICE  TWICE
// keep 35d    skip   skip   skip   skip
