package web

import (
	"testing"

	"idemlab/playground"
)

// A view's links, written from its linkCache, are byte for byte what the
// encoder writes without it: for every scenario, at every cursor, for the
// states a view links to (an event added, the cursor moved, a panel
// toggled, the last event amended, another worker, other handlers, home).
func TestLinkCache_WritesWhatTheEncoderWrites(t *testing.T) {
	n := 0
	for _, sc := range playground.Scenarios() {
		for _, place := range []pgPlace{pagePlace(sc, false), pagePlace(sc, true)} {
			base := place.home
			base.seed, base.custom = 7, "SELECT 1;"
			for at := -1; at <= len(base.events); at++ {
				s := base
				s.at = at
				cached := place
				cached.links = newLinkCache(s)
				next := []State{s, place.home, s.withAt(0, len(s.events)), s.toggled(panelSQL), s.appendEvent(playground.Event{Kind: playground.EventDeliver, Message: sc.Messages[0].ID}),
					s.appendEvent(playground.Event{Kind: playground.EventAdvance, N: 30}), s.amendLast(playground.Event{Kind: playground.EventRedeliver, Message: "a b;c", Fault: playground.FaultLoseAck})}
				other := s
				other.to, other.open, other.handlers = sc.Workers[len(sc.Workers)-1], moreBroker|moreHandlers, sc.Handlers[:1]
				next = append(next, other)
				for _, x := range next {
					if got, want := cached.href(x), place.href(x); got != want {
						t.Fatalf("%s at %d: the cache writes\n%s\nthe encoder\n%s", sc.Name, at, got, want)
					}
					n++
				}
			}
		}
	}
	t.Logf("%d links compared", n)
}
