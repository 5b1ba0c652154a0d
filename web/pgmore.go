package web

import (
	"fmt"
	"net/url"
	"slices"
	"strings"
	"sync"

	"github.com/a-h/templ"

	"idemlab/internal/english"
	"idemlab/playground"
)

// Render what is shown: the playground's closed control panels (the
// <details> under the messages: workers, broker, handlers) are drawn as
// their summary and a link, not their contents, which are about a third
// of a click's bytes and of its links to build. A panel opens
//
//   - without JavaScript, by its link: the same state with open=NAME,
//     whose page draws the panel open, and whose links keep it open;
//   - with JavaScript, on its toggle: playground.js asks the state's URL
//     with panel=NAME for that one panel (an answer cached and tagged like
//     a fragment) and puts its contents in place; the next click's
//     fragment is asked with open= naming the panels the learner has open.
//
// The script editor's panel is always drawn: a rejected script opens it,
// and a workshop's chaos push appends to every playground's script.

// morePanels is a set of control panels drawn open (open=workers,broker).
type morePanels uint8

const (
	moreWorkers  morePanels = 1 << iota // workers, leases and interleaving
	moreBroker                          // the broker and the clock
	moreHandlers                        // the handlers to compare
)

// namedBit is a member of a set of bits and its name in a URL.
type namedBit[T ~uint8] struct {
	panel T
	name  string
}

// moreNames are the control panels in the order a URL spells them, which
// is the order the page draws them.
var moreNames = [...]namedBit[morePanels]{{moreWorkers, "workers"}, {moreBroker, "broker"}, {moreHandlers, "handlers"}}

// moreNamesText lists the names for messages.
const moreNamesText = "workers, broker and handlers"

func (ps morePanels) has(p morePanels) bool { return ps&p != 0 }

// String is the canonical text of a set: its names in moreNames' order.
func (ps morePanels) String() string { return moreTexts()[ps] }

// moreTexts and panelTexts are every set's text, written once: a click
// writes them into dozens of links.
var (
	moreTexts  = sync.OnceValue(func() *[256]string { return bitsTexts(moreNames[:]) })
	panelTexts = sync.OnceValue(func() *[256]string { return bitsTexts(panelNames[:]) })
)

// bitsTexts is bitsText of every set of names.
func bitsTexts[T ~uint8](names []namedBit[T]) *[256]string {
	var out [256]string
	for set := range out {
		out[set] = bitsText(names, T(set))
	}
	return &out
}

// bitsText is a set's names in the order of names, comma-separated.
func bitsText[T ~uint8](names []namedBit[T], set T) string {
	var b strings.Builder
	for _, n := range names {
		if set&n.panel != 0 {
			if b.Len() > 0 {
				b.WriteByte(',')
			}
			b.WriteString(n.name)
		}
	}
	return b.String()
}

// parseBits reads a comma-separated set of names; an unknown one is the
// learner's mistake on field, said with the names there are (list).
func parseBits[T ~uint8](names []namedBit[T], text, field, what, list string) (T, error) {
	var set T
	for name := range strings.SplitSeq(text, ",") {
		name = strings.TrimSpace(name)
		if name == "" {
			continue
		}
		i := slices.IndexFunc(names, func(n namedBit[T]) bool { return n.name == name })
		if i < 0 {
			return 0, &playground.InputError{Field: field, Msg: fmt.Sprintf("unknown %s %q; %ss are %s", what, english.Truncate(name, 20), what, list)}
		}
		set |= names[i].panel
	}
	return set, nil
}

// parseMorePanels reads open=: the control panels drawn open.
func parseMorePanels(text string) (morePanels, error) {
	return parseBits(moreNames[:], text, keyOpen, "panel", moreNamesText)
}

// panelFromQuery reads panel=, which asks for one control panel alone (0
// when absent). It is not part of a state: it never appears in a link.
func panelFromQuery(q url.Values) (morePanels, error) {
	vs, ok := q[keyPanel]
	if !ok {
		return 0, nil
	}
	bad := func(msg string) error { return &playground.InputError{Field: keyPanel, Msg: msg} }
	if len(vs) != 1 || strings.Contains(vs[0], ",") {
		return 0, bad(fmt.Sprintf("%q names more than one panel; ask for one of %s", english.Truncate(strings.Join(vs, ","), 40), moreNamesText))
	}
	p, err := parseMorePanels(vs[0])
	if err != nil {
		return 0, bad(err.(*playground.InputError).Msg)
	}
	if p == 0 {
		return 0, bad("names no panel; ask for one of " + moreNamesText)
	}
	return p, nil
}

// moreToggle is a control panel as the page draws it: open with its
// contents, or closed with a link that opens it without JavaScript.
type moreToggle struct {
	Name  string // as in open=
	Label string
	Open  bool
	Href  string // this state with the panel open (the no-JS link); "" when open
}

var moreLabels = map[morePanels]string{
	moreWorkers:  "Workers, leases and interleaving",
	moreBroker:   "Broker and clock",
	moreHandlers: "Handlers to compare",
}

// newMoreToggles are the control panels of a view, in moreNames' order.
func newMoreToggles(v *siteView, pv *playgroundView) []moreToggle {
	out := make([]moreToggle, 0, len(moreNames))
	for _, n := range moreNames {
		t := moreToggle{Name: n.name, Label: moreLabels[n.panel], Open: pv.state.open.has(n.panel)}
		if !t.Open {
			next := pv.state
			next.open |= n.panel
			t.Href = v.path(pv.place.href(next))
		}
		out = append(out, t)
	}
	return out
}

// morePanelAlone is the answer to panel=NAME: that control panel, open,
// alone (playground.js puts its contents in place). A run stopped at its
// budget answers its refused playground instead.
func morePanelAlone(pv *playgroundView, p morePanels) templ.Component {
	if pv.refusal != nil {
		return LivePlayground(pv)
	}
	for i, n := range moreNames {
		if n.panel == p {
			return pgMore(pv, i)
		}
	}
	return LivePlayground(pv)
}

// panelRequest reads a request's panel= (0 when absent): a bad one is a
// 400 that says which panels there are, with a way to the playground.
func panelRequest(q url.Values, back string) (morePanels, error) {
	p, err := panelFromQuery(q)
	if err != nil {
		return 0, &serverError{message: "This link asks for a panel the playground does not have.", action: &link{Label: "Open the playground", Href: back}, err: err}
	}
	return p, nil
}

// withPanelOpen is the state and query of a panel= request: the state with
// the panel open, so that its links keep it open, and the query saying so
// (a learner's bad input is looked for again in it).
func withPanelOpen(p morePanels, s pgState, q url.Values) (pgState, url.Values) {
	if p == 0 {
		return s, q
	}
	s.open |= p
	q = cloneQuery(q)
	q.Set(keyOpen, s.open.String())
	return s, q
}
