package web

import (
	"idemlab/web/playurl"
	"strings"
	"sync"

	"github.com/a-h/templ"

	"idemlab/internal/english"
	"idemlab/playground"
)

// The parts of the playground's panels that repeat per event, per step or
// per data point, drawn with markup (markup.go says why); the panels
// around them are in pglive_markup.go.

// drawChart draws a ledger chart: axis, ticks, the cursor, the
// first divergence, the expected and actual lines and their dots.
func drawChart(m *markup, c *chartView) {
	m.raw(`<svg class="pg-chart" viewBox="0 0 `)
	m.int(c.Width)
	m.raw(" ")
	m.int(c.Height)
	m.raw(`" role="img"`)
	m.raw(` aria-label="`)
	m.text(c.Label)
	m.raw(` after each event, expected: `)
	m.ints(c.Expected)
	m.raw(`; actual: `)
	m.ints(c.Actual)
	m.raw(`."`)
	m.raw(` data-testid="pg-chart"><line class="ch-axis"`)
	m.intAttr("x1", c.Left)
	m.intAttr("y1", c.Base)
	m.intAttr("x2", c.Right)
	m.intAttr("y2", c.Base)
	m.raw(`></line> `)
	for _, t := range c.YTicks {
		m.raw(`<line class="ch-grid"`)
		m.intAttr("x1", c.Left)
		m.intAttr("y1", t.Pos)
		m.intAttr("x2", c.Right)
		m.intAttr("y2", t.Pos)
		m.raw(`></line> <text class="ch-label"`)
		m.intAttr("x", c.Left-4)
		m.intAttr("y", t.Pos+4)
		m.raw(` text-anchor="end">`)
		m.int64(t.Value)
		m.raw(`</text> `)
	}
	for _, t := range c.XTicks {
		m.raw(`<text class="ch-label"`)
		m.intAttr("x", t.Pos)
		m.intAttr("y", c.Base+14)
		m.raw(` text-anchor="middle">`)
		m.int64(t.Value)
		m.raw(`</text> `)
	}
	m.raw(`<rect class="ch-cursor"`)
	m.intAttr("x", c.CursorX)
	m.intAttr("y", c.Top)
	m.intAttr("width", c.CursorW)
	m.intAttr("height", c.Base-c.Top)
	m.raw(`></rect> `)
	if c.DivX >= 0 {
		m.raw(`<line class="ch-div"`)
		m.intAttr("x1", c.DivX)
		m.intAttr("y1", c.Top)
		m.intAttr("x2", c.DivX)
		m.intAttr("y2", c.Base)
		m.raw(` data-divergence></line> `)
	}
	m.raw(`<polyline class="ch-actual"`)
	m.attr("points", c.ActualPts)
	m.raw(`></polyline> <polyline class="ch-expected"`)
	m.attr("points", c.ExpectedPts)
	m.raw(`></polyline> `)
	for _, d := range c.Dots {
		if d.Differs {
			m.raw(`<rect class="ch-dot ch-dot-wrong"`)
			m.intAttr("x", d.X-3)
			m.intAttr("y", d.Y-3)
			m.raw(` width="6" height="6"></rect>`)
		} else {
			m.raw(`<circle class="ch-dot"`)
			m.intAttr("cx", d.X)
			m.intAttr("cy", d.Y)
			m.raw(` r="2.5"></circle>`)
		}
	}
	m.raw(`</svg>`)
}

// pgStepGroups is the step list's body: per event, per handler, every
// step, with its SQL when the SQL panel is open.
func pgStepGroups(pv *playgroundView) templ.Component {
	return markupComponent(func(m *markup) { drawStepGroups(m, pv) })
}

func drawStepGroups(m *markup, pv *playgroundView) {
	sql := pv.state.Panels.Has(playurl.PanelSQL)
	m.raw(`<ol class="pg-step-groups">`)
	for gi := range pv.steps {
		g := &pv.steps[gi]
		m.raw(`<li class="pg-step-group"`)
		m.intAttr("data-event", g.Event)
		m.flag("data-current", g.Current)
		m.flag("data-future", g.Future)
		m.flag("data-divergent", g.Divergent)
		m.raw(`><p class="pg-step-event"><span class="pg-event-n">`)
		m.int(g.Event)
		m.raw(`</span> <code>`)
		m.text(g.Text)
		m.raw(`</code> <span class="pg-muted">tick `)
		m.int64(g.Tick)
		m.raw(`</span> `)
		if g.Future {
			m.raw(`<span class="pg-tag">after the cursor</span> `)
		}
		if g.Divergent {
			m.raw(`<span class="pg-tag pg-tag-bad" data-divergence>⚑ first divergence</span>`)
		}
		m.raw(`</p><div class="pg-step-handlers">`)
		for i, hg := range g.Handlers {
			m.raw(`<div class="pg-step-handler"`)
			m.intAttr("data-h", i)
			m.raw(`><p class="pg-step-handler-name"><code>`)
			m.text(hg.Name)
			m.raw(`</code></p><ol class="pg-step-list">`)
			for si := range hg.Steps {
				drawStep(m, &hg.Steps[si], sql)
			}
			if len(hg.Steps) == 0 {
				m.raw(`<li class="pg-step pg-muted">nothing happened</li>`)
			}
			m.raw(`</ol></div>`)
		}
		m.raw(`</div></li>`)
	}
	m.raw(`</ol>`)
}

func drawStep(m *markup, sv *stepView, sql bool) {
	st := sv.step
	m.raw(`<li class="pg-step"`)
	m.attr("data-kind", st.Kind)
	m.intAttr("value", st.Index)
	m.raw(` data-testid="pg-step"`)
	m.flag("data-divergent", sv.Divergent)
	m.raw(`>`)
	drawStepText(m, st)
	m.raw(` `)
	switch failure := postgresFailure(st.SQLState); {
	case st.RowsAffected != nil:
		m.raw(`<span class="pg-muted">— `)
		m.text(english.Plural(int(*st.RowsAffected), "row", "rows"))
		m.raw(` changed</span> `)
	case st.RowsFound != nil:
		m.raw(`<span class="pg-muted">— `)
		m.text(english.Plural(int(*st.RowsFound), "row", "rows"))
		m.raw(` found</span> `)
	case failure != "":
		m.raw(`<span class="pg-muted">— `)
		m.text(failure)
		m.raw(`</span> `)
	}
	if st.Effect {
		m.raw(`<span class="pg-tag">effect committed</span> `)
	}
	if sv.Divergent {
		m.raw(`<span class="pg-tag pg-tag-bad" data-divergence>⚑ diverges here</span> `)
	}
	if st.SQL != "" && sql {
		m.raw(`<pre class="pg-sql" data-testid="pg-sql"><code>`)
		m.text(st.SQL)
		m.raw(`</code></pre><dl class="pg-sql-facts">`)
		if sv.Args != "" {
			m.raw(`<div><dt>Bound values</dt><dd><code>`)
			m.text(sv.Args)
			m.raw(`</code></dd></div>`)
		}
		if st.Error != "" {
			m.raw(`<div><dt>Error</dt><dd>`)
			m.text(st.Error)
			m.raw(`</dd></div>`)
		}
		for _, ch := range sv.Changes {
			m.raw(`<div><dt>Row</dt><dd><code>`)
			m.text(ch)
			m.raw(`</code></dd></div>`)
		}
		m.raw(`</dl>`)
	}
	m.raw(`</li>`)
}

// drawStepText is a step in words: "The broker delivers msg-1 to A
// (attempt 1)", "A runs UPDATE accounts", with its note after a colon.
func drawStepText(m *markup, st *playground.Step) {
	who := st.Worker
	if who == "" {
		who = "broker"
	}
	switch st.Kind {
	case playground.StepDeliver:
		if st.Copy > 1 {
			m.raw("The broker delivers copy ")
			m.int(st.Copy)
			m.raw(" of ")
		} else {
			m.raw("The broker delivers ")
		}
		m.text(st.Message)
		m.raw(" to ")
		m.text(st.Worker)
		m.raw(" (attempt ")
		m.int(st.Attempt)
		if st.Copy > 1 {
			m.raw(" of that copy)")
		} else {
			m.raw(")")
		}
	case playground.StepSQL:
		m.text(who)
		m.raw(" runs ")
		m.text(sqlLabel(st.SQL))
	case playground.StepBlocked:
		m.text(who)
		if st.Error == "" { // PostgreSQL: the statement waits on a lock, no error; the note says whose
			m.raw(" runs ")
			m.text(sqlLabel(st.SQL))
			m.raw(", and PostgreSQL makes it wait")
		} else {
			m.raw(" is blocked on ")
			m.text(sqlLabel(st.SQL))
			m.raw(" (SQLITE_BUSY) and will retry")
		}
	default:
		m.text(who)
		m.raw(": ")
		m.text(strings.ReplaceAll(st.Kind, "-", " "))
	}
	if st.Note != "" {
		m.raw(": ")
		m.text(st.Note)
	}
}

// pgLink draws a control: a link when it applies, a greyed label when not.
// look is how it looks: btn, primary, fault, seg or inline. A playground
// draws a few dozen of them on every click.
func pgLink(l actionLink, look string) templ.Component {
	return markupComponent(func(m *markup) { drawLink(m, &l, look) })
}

func drawLink(m *markup, l *actionLink, look string) {
	switch {
	case l.Href != "":
		m.raw(`<a class="pg-ctl"`)
		m.attr("data-look", look)
		m.attr("href", l.Href) // a URL this package built (templ.SafeURL in a template)
		if l.Key != "" {
			m.attr("data-key", l.Key)
			m.attr("aria-keyshortcuts", l.Key)
		}
		if l.TestID != "" {
			m.attr("data-testid", l.TestID)
		}
		if l.Current {
			m.raw(` aria-current="true"`)
		}
		m.attr("title", l.Title)
		m.raw(`>`)
		m.text(l.Label)
		m.raw(` `)
		if len(l.Key) == 1 {
			m.raw(`<kbd class="pg-key" aria-hidden="true">`)
			m.text(l.Key)
			m.raw(`</kbd>`)
		}
		m.raw(`</a>`)
	case l.Reason != "":
		m.raw(`<span class="pg-ctl"`)
		m.attr("data-look", look)
		m.raw(` aria-disabled="true"`)
		m.attr("data-testid", l.TestID)
		m.attr("data-reason", l.Reason)
		m.raw(` title="Not now: `)
		m.text(l.Reason)
		m.raw(`">`)
		m.text(l.Label)
		m.raw(`<span class="visually-hidden">, not now: `)
		m.text(l.Reason)
		m.raw(`</span></span>`)
	default:
		m.raw(`<span class="pg-ctl"`)
		m.attr("data-look", look)
		m.raw(` aria-disabled="true" title="`)
		m.text(l.Title)
		m.raw(` (not possible now)">`)
		m.text(l.Label)
		m.raw(`</span>`)
	}
}

// drawKeys is the keyboard shortcuts' popover; its list is the same on
// every click, drawn once (keysHelpList).
func drawKeys(m *markup, pv *playgroundView) {
	m.raw(`<div class="pg-keys" id="`)
	m.text(pv.id)
	m.raw(`-keys" popover data-testid="pg-keys"><p class="pg-keys-title">Keyboard shortcuts</p><p class="pg-muted">They act on the playground that has the focus`)
	m.text(pgKeysWhere(pv))
	m.raw(`.</p>`)
	m.raw(keysHelpList())
	m.raw(`<button type="button" class="button" popovertarget="`)
	m.text(pv.id)
	m.raw(`-keys" popovertargetaction="hide">Close</button></div>`)
}

// keysHelpList is keysHelp as a definition list.
var keysHelpList = sync.OnceValue(func() string {
	m := &markup{}
	m.raw(`<dl>`)
	for _, k := range keysHelp {
		m.raw(`<div><dt><kbd>`)
		m.text(k.Key)
		m.raw(`</kbd></dt><dd>`)
		m.text(k.Label)
		m.raw(`</dd></div>`)
	}
	m.raw(`</dl>`)
	return string(m.b)
})

// drawRows draws a ledger's rows panel: how its handler works, and its tables,
// a cell each per column and row.
func drawRows(m *markup, h *handlerView) {
	m.raw(`<div class="pg-ledger-more" data-testid="pg-rows"><p class="pg-ledger-desc">`)
	m.text(h.Description)
	if h.Idempotent {
		m.raw(` <span class="pg-tag">idempotent</span></p>`)
	} else {
		m.raw(` <span class="pg-tag pg-tag-warn">not idempotent</span></p>`)
	}
	for ti := range h.Tables {
		t := &h.Tables[ti]
		m.raw(`<div class="pg-table-wrap"><table class="pg-table"`)
		m.attr("data-table", t.Name)
		m.raw(`><caption>`)
		m.text(t.Name)
		m.raw(`</caption> <thead><tr>`)
		for _, col := range t.Columns {
			m.raw(`<th scope="col">`)
			m.text(col)
			m.raw(`</th>`)
		}
		m.raw(`</tr></thead> <tbody>`)
		for _, r := range t.Rows {
			if r.Changed {
				m.raw(`<tr class="is-changed" data-changed>`)
			} else {
				m.raw(`<tr>`)
			}
			for i, cell := range r.Cells {
				if i > 0 {
					m.raw(`<td>`)
					m.text(cell)
					m.raw(`</td>`)
					continue
				}
				m.raw(`<th scope="row">`)
				m.text(cell)
				m.raw(` `)
				if r.Changed {
					m.raw(`<span class="visually-hidden">(changed by this event)</span>`)
				}
				m.raw(`</th>`)
			}
			m.raw(`</tr>`)
		}
		if len(t.Rows) == 0 {
			m.raw(`<tr class="pg-empty"><td colspan="`)
			m.int(len(t.Columns))
			m.raw(`">no rows</td></tr>`)
		}
		m.raw(`</tbody></table></div>`)
	}
	m.raw(`</div>`)
}
