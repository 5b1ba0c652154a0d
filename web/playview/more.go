package playview

import (
	"idemlab/web/playurl"
	"idemlab/web/site"
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
//   - with JavaScript, on its toggle: playground.js swaps in the fragment
//     of the same link (closing, of the panel's data-more-close link), in
//     place of the history entry, so that every link in the playground
//     keeps the panels as the learner has them: playurl writes every
//     playground URL, the script none. (panel=NAME, one panel alone, is
//     still answered.)
//
// The script editor's panel is always drawn: a rejected script opens it,
// and a workshop's chaos push appends to every playground's script.

// moreToggle is a control panel as the page draws it: open with its
// contents, or closed with a link that opens it without JavaScript.
type moreToggle struct {
	Name  string // as in open=
	Label string
	Open  bool
	// Href is, closed, this state with the panel open (the no-JS link);
	// open, this state with it closed (data-more-close, for playground.js).
	// Both come from playurl: the page writes no playground URL itself.
	Href string
}

var moreLabels = map[playurl.MorePanels]string{
	playurl.MoreWorkers:  "Workers, leases and interleaving",
	playurl.MoreBroker:   "Broker and clock",
	playurl.MoreHandlers: "Handlers to compare",
}

// newMoreToggles are the control panels of a view, in moreNames' order.
func newMoreToggles(v *site.View, pv *View) []moreToggle {
	out := make([]moreToggle, 0, len(playurl.MoreNames))
	for _, n := range playurl.MoreNames {
		t := moreToggle{Name: n.Name, Label: moreLabels[n.Bit], Open: pv.state.Open.Has(n.Bit)}
		next := pv.state
		next.Open ^= n.Bit
		t.Href = v.Path(pv.Place.Href(next))
		out = append(out, t)
	}
	return out
}

// morePanelAlone is the answer to panel=NAME: that control panel, open,
// alone (playground.js puts its contents in place). A run stopped at its
// budget answers its refused playground instead.
func MorePanelAlone(pv *View, p playurl.MorePanels) templ.Component {
	if pv.refusal != nil {
		return LivePlayground(pv)
	}
	for i, n := range playurl.MoreNames {
		if n.Bit == p {
			return pgMore(pv, i)
		}
	}
	return LivePlayground(pv)
}

// panelRequest reads a request's panel= (0 when absent): a bad one is a
// 400 that says which panels there are, with a way to the playground.
func PanelRequest(q url.Values, back string) (playurl.MorePanels, error) {
	p, err := playurl.PanelFromQuery(q)
	if err != nil {
		return 0, &site.Error{Message: "This link asks for a panel the playground does not have.", Action: &site.Link{Label: "Open the playground", Href: back}, Err: err}
	}
	return p, nil
}

// withPanelOpen is the state and query of a panel= request: the state with
// the panel open, so that its links keep it open, and the query saying so
// (a learner's bad input is looked for again in it).
func WithPanelOpen(p playurl.MorePanels, s playurl.State, q url.Values) (playurl.State, url.Values) {
	if p == 0 {
		return s, q
	}
	s.Open |= p
	q = cloneQuery(q)
	q.Set(playurl.KeyOpen, s.Open.String())
	return s, q
}
