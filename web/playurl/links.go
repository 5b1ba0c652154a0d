package playurl

import (
	"slices"
	"strings"

	"idemlab/playground"
)

// A click draws dozens of links, each the whole state written as a URL,
// and most differ from the state shown only by one event added at the
// cursor, or by the cursor, a panel or the worker deliveries go to: the
// script, the longest field, is the same or the same plus one event. A
// view writes it once, escaped, and its links copy it.

// LinkCache is what the links of one view share: its script escaped for
// a query, whole and up to the cursor, and its handlers joined.
type LinkCache struct {
	events   []playground.Event
	cut      int    // the cursor: links add their event after events[:cut]
	all      []byte // the escaped text of events
	head     []byte // the escaped text of events[:cut]
	handlers []string
	joined   string // handlers, comma-separated
}

func NewLinkCache(s State) *LinkCache {
	c := s.Cursor(len(s.Events))
	lc := &LinkCache{events: s.Events, cut: c, handlers: s.Handlers, joined: strings.Join(s.Handlers, ",")}
	lc.head = AppendQueryEscaped(nil, (&playground.Script{Events: s.Events[:c]}).String())
	lc.all = lc.head
	if c < len(s.Events) {
		lc.all = AppendQueryEscaped(nil, s.ScriptText())
	}
	return lc
}

// appendScript appends the canonical text of events, escaped for a query
// (the script's events joined by "; ", as playground.Script prints them).
func (lc *LinkCache) appendScript(b []byte, events []playground.Event) []byte {
	if lc != nil {
		switch {
		case len(events) == len(lc.events) && slices.Equal(events, lc.events):
			return append(b, lc.all...)
		case len(events) == lc.cut+1 && slices.Equal(events[:lc.cut], lc.events[:lc.cut]):
			b = append(b, lc.head...)
			if lc.cut > 0 {
				b = append(b, "%3B+"...) // "; "
			}
			return AppendQueryEscaped(b, events[lc.cut].String())
		}
	}
	return AppendQueryEscaped(b, (&playground.Script{Events: events}).String())
}

// handlersText is handlers comma-separated.
func (lc *LinkCache) handlersText(handlers []string) string {
	if lc != nil && slices.Equal(handlers, lc.handlers) {
		return lc.joined
	}
	return strings.Join(handlers, ",")
}
