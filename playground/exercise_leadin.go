package playground

import (
	"fmt"
	"regexp"
	"strconv"
	"strings"
)

// LeadInContradiction compares what a lesson's lead-in to an exercise
// says of its checks with the exercise's bounds, and reports the first
// claim no set of bounds makes true ("" when there is none): a number of
// events ("up to six events") that is no set's max_events, a number of
// workers that is no set's, or a fault (a lost ack, a crash, a lease that
// runs out, a second copy, a replay, a retry) that no set includes. The
// page shows the bounds on the exercise's card; lint holds the prose to
// them.
func (e *Exercise) LeadInContradiction(text string) string {
	text = strings.ToLower(strings.Join(strings.Fields(text), " "))
	checks := e.checks()
	for _, m := range leadInEvents.FindAllStringSubmatch(text, -1) {
		n, ok := leadInNumber(m[1])
		if !ok {
			continue
		}
		found := false
		for _, c := range checks {
			found = found || c.bounds.MaxEvents == n
		}
		if !found {
			return fmt.Sprintf("the lead-in says %q, but no set of the exercise's bounds has max_events %d (%s)", m[0], n, e.boundsList(func(b ExploreBounds) int { return b.MaxEvents }))
		}
	}
	for _, m := range leadInWorkers.FindAllStringSubmatch(text, -1) {
		n, ok := leadInNumber(m[1])
		if !ok {
			continue
		}
		found := false
		for _, c := range checks {
			found = found || c.bounds.Workers == n
		}
		if !found {
			return fmt.Sprintf("the lead-in says %q, but no set of the exercise's bounds has %d workers (%s)", m[0], n, e.boundsList(func(b ExploreBounds) int { return b.Workers }))
		}
	}
	for _, f := range []struct {
		words []string
		field string
		n     func(ExploreBounds) int
	}{
		{[]string{"lost ack", "ack is lost", "ack that never"}, "lost_acks", func(b ExploreBounds) int { return b.LostAcks }},
		{[]string{"crash"}, "crashes", func(b ExploreBounds) int { return b.Crashes }},
		{[]string{"lease expir", "lease runs out", "lease that runs out", "lease ran out"}, "expiries", func(b ExploreBounds) int { return b.Expiries }},
		{[]string{"second copy", "second copies"}, "duplicates or expiries", func(b ExploreBounds) int { return b.Duplicates + b.Expiries }},
		{[]string{"replay"}, "replays", func(b ExploreBounds) int { return b.Replays }},
		{[]string{"republish", "retries", "retry"}, "publishes", func(b ExploreBounds) int { return b.Publishes }},
		{[]string{"interleav", "statement by statement"}, "interleave", func(b ExploreBounds) int {
			if b.Interleave {
				return 1
			}
			return 0
		}},
	} {
		word := ""
		for _, w := range f.words {
			if strings.Contains(text, w) {
				word = w
				break
			}
		}
		if word == "" {
			continue
		}
		found := false
		for _, c := range checks {
			found = found || f.n(c.bounds) > 0
		}
		if !found {
			return fmt.Sprintf("the lead-in mentions %q, but no set of the exercise's bounds has %s", word, f.field)
		}
	}
	return ""
}

var (
	leadInEvents  = regexp.MustCompile(`(?:up to|at most|of) (\w+) events`)
	leadInWorkers = regexp.MustCompile(`(\w+) workers`)
	leadInWords   = map[string]int{"one": 1, "two": 2, "three": 3, "four": 4, "five": 5, "six": 6, "seven": 7, "eight": 8,
		"nine": 9, "ten": 10, "eleven": 11, "twelve": 12}
)

func leadInNumber(w string) (int, bool) {
	if n, ok := leadInWords[w]; ok {
		return n, true
	}
	n, err := strconv.Atoi(w)
	return n, err == nil
}

// boundsList names a number of each set of bounds: "bounds 6, overlap 10".
func (e *Exercise) boundsList(n func(ExploreBounds) int) string {
	var out []string
	for _, c := range e.checks() {
		out = append(out, fmt.Sprintf("%s %d", c.field, n(c.bounds)))
	}
	return strings.Join(out, ", ")
}
