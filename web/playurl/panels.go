package playurl

import (
	"fmt"
	"net/url"
	"slices"
	"strings"
	"sync"

	"idemlab/internal/english"
	"idemlab/playground"
)

// Field is one field of a state's query: a hidden input of a GET
// form, or a name=value of a link.
type Field struct{ Name, Value string }

// LessonPath is the site path of a lesson page; embedPath of its embed view.
func LessonPath(slug string) string { return "/lessons/" + url.PathEscape(slug) }
func EmbedPath(slug string) string  { return "/embed/lessons/" + url.PathEscape(slug) }

// MorePanels is a set of control panels drawn open (open=workers,broker).
type MorePanels uint8

const (
	MoreWorkers  MorePanels = 1 << iota // workers, leases and interleaving
	MoreBroker                          // the broker and the clock
	MoreHandlers                        // the handlers to compare
)

// NamedBit is a member of a set of bits and its name in a URL.
type NamedBit[T ~uint8] struct {
	Bit  T
	Name string
}

// MoreNames are the control panels in the order a URL spells them, which
// is the order the page draws them.
var MoreNames = [...]NamedBit[MorePanels]{{MoreWorkers, "workers"}, {MoreBroker, "broker"}, {MoreHandlers, "handlers"}}

// MoreNamesText lists the names for messages.
const MoreNamesText = "workers, broker and handlers"

func (ps MorePanels) Has(p MorePanels) bool { return ps&p != 0 }

// String is the canonical text of a set: its names in moreNames' order.
func (ps MorePanels) String() string { return moreTexts()[ps] }

// moreTexts and panelTexts are every set's text, written once: a click
// writes them into dozens of links.
var (
	moreTexts  = sync.OnceValue(func() *[256]string { return bitsTexts(MoreNames[:]) })
	panelTexts = sync.OnceValue(func() *[256]string { return bitsTexts(PanelNames[:]) })
)

// bitsTexts is bitsText of every set of names.
func bitsTexts[T ~uint8](names []NamedBit[T]) *[256]string {
	var out [256]string
	for set := range out {
		out[set] = bitsText(names, T(set))
	}
	return &out
}

// bitsText is a set's names in the order of names, comma-separated.
func bitsText[T ~uint8](names []NamedBit[T], set T) string {
	var b strings.Builder
	for _, n := range names {
		if set&n.Bit != 0 {
			if b.Len() > 0 {
				b.WriteByte(',')
			}
			b.WriteString(n.Name)
		}
	}
	return b.String()
}

// parseBits reads a comma-separated set of names; an unknown one is the
// learner's mistake on field, said with the names there are (list).
func parseBits[T ~uint8](names []NamedBit[T], text, field, what, list string) (T, error) {
	var set T
	for name := range strings.SplitSeq(text, ",") {
		name = strings.TrimSpace(name)
		if name == "" {
			continue
		}
		i := slices.IndexFunc(names, func(n NamedBit[T]) bool { return n.Name == name })
		if i < 0 {
			return 0, &playground.InputError{Field: field, Msg: fmt.Sprintf("unknown %s %q; %ss are %s", what, english.Truncate(name, 20), what, list)}
		}
		set |= names[i].Bit
	}
	return set, nil
}

// ParseMorePanels reads open=: the control panels drawn open.
func ParseMorePanels(text string) (MorePanels, error) {
	return parseBits(MoreNames[:], text, KeyOpen, "panel", MoreNamesText)
}

// PanelFromQuery reads panel=, which asks for one control panel alone (0
// when absent). It is not part of a state: it never appears in a link.
func PanelFromQuery(q url.Values) (MorePanels, error) {
	vs, ok := q[KeyPanel]
	if !ok {
		return 0, nil
	}
	bad := func(msg string) error { return &playground.InputError{Field: KeyPanel, Msg: msg} }
	if len(vs) != 1 || strings.Contains(vs[0], ",") {
		return 0, bad(fmt.Sprintf("%q names more than one panel; ask for one of %s", english.Truncate(strings.Join(vs, ","), 40), MoreNamesText))
	}
	p, err := ParseMorePanels(vs[0])
	if err != nil {
		return 0, bad(err.(*playground.InputError).Msg)
	}
	if p == 0 {
		return 0, bad("names no panel; ask for one of " + MoreNamesText)
	}
	return p, nil
}
