package web

import (
	"net/url"

	"github.com/a-h/templ"
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
func withPanelOpen(p morePanels, s State, q url.Values) (State, url.Values) {
	if p == 0 {
		return s, q
	}
	s.open |= p
	q = cloneQuery(q)
	q.Set(keyOpen, s.open.String())
	return s, q
}
