package playurl

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
		for _, place := range []Place{PagePlace(sc, false), PagePlace(sc, true)} {
			base := place.Home
			base.Seed, base.Custom = 7, "SELECT 1;"
			for at := -1; at <= len(base.Events); at++ {
				s := base
				s.At = at
				cached := place
				cached.Links = NewLinkCache(s)
				next := []State{s, place.Home, s.WithAt(0, len(s.Events)), s.Toggled(PanelSQL), s.AppendEvent(playground.Event{Kind: playground.EventDeliver, Message: sc.Messages[0].ID}),
					s.AppendEvent(playground.Event{Kind: playground.EventAdvance, N: 30}), s.AmendLast(playground.Event{Kind: playground.EventRedeliver, Message: "a b;c", Fault: playground.FaultLoseAck})}
				other := s
				other.To, other.Open, other.Handlers = sc.Workers[len(sc.Workers)-1], MoreBroker|MoreHandlers, sc.Handlers[:1]
				next = append(next, other)
				for _, x := range next {
					if got, want := cached.Href(x), place.Href(x); got != want {
						t.Fatalf("%s at %d: the cache writes\n%s\nthe encoder\n%s", sc.Name, at, got, want)
					}
					n++
				}
			}
		}
	}
	t.Logf("%d links compared", n)
}
