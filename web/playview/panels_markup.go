package playview

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
// around them are in playview/live_markup.go.

// drawChart draws a ledger chart: axis, ticks, the cursor, the
// first divergence, the expected and actual lines and their dots.
func drawChart(m *Markup, c *chartView) {
	m.Raw(`<svg class="pg-chart" viewBox="0 0 `)
	m.int(c.Width)
	m.Raw(" ")
	m.int(c.Height)
	m.Raw(`" role="img"`)
	m.Raw(` aria-label="`)
	m.Text(c.Label)
	m.Raw(` after each event, expected: `)
	m.ints(c.Expected)
	m.Raw(`; actual: `)
	m.ints(c.Actual)
	m.Raw(`."`)
	m.Raw(` data-testid="pg-chart"><line class="ch-axis"`)
	m.IntAttr("x1", c.Left)
	m.IntAttr("y1", c.Base)
	m.IntAttr("x2", c.Right)
	m.IntAttr("y2", c.Base)
	m.Raw(`></line> `)
	for _, t := range c.YTicks {
		m.Raw(`<line class="ch-grid"`)
		m.IntAttr("x1", c.Left)
		m.IntAttr("y1", t.Pos)
		m.IntAttr("x2", c.Right)
		m.IntAttr("y2", t.Pos)
		m.Raw(`></line> <text class="ch-label"`)
		m.IntAttr("x", c.Left-4)
		m.IntAttr("y", t.Pos+4)
		m.Raw(` text-anchor="end">`)
		m.int64(t.Value)
		m.Raw(`</text> `)
	}
	for _, t := range c.XTicks {
		m.Raw(`<text class="ch-label"`)
		m.IntAttr("x", t.Pos)
		m.IntAttr("y", c.Base+14)
		m.Raw(` text-anchor="middle">`)
		m.int64(t.Value)
		m.Raw(`</text> `)
	}
	m.Raw(`<rect class="ch-cursor"`)
	m.IntAttr("x", c.CursorX)
	m.IntAttr("y", c.Top)
	m.IntAttr("width", c.CursorW)
	m.IntAttr("height", c.Base-c.Top)
	m.Raw(`></rect> `)
	if c.DivX >= 0 {
		m.Raw(`<line class="ch-div"`)
		m.IntAttr("x1", c.DivX)
		m.IntAttr("y1", c.Top)
		m.IntAttr("x2", c.DivX)
		m.IntAttr("y2", c.Base)
		m.Raw(` data-divergence></line> `)
	}
	m.Raw(`<polyline class="ch-actual"`)
	m.Attr("points", c.ActualPts)
	m.Raw(`></polyline> <polyline class="ch-expected"`)
	m.Attr("points", c.ExpectedPts)
	m.Raw(`></polyline> `)
	for _, d := range c.Dots {
		if d.Differs {
			m.Raw(`<rect class="ch-dot ch-dot-wrong"`)
			m.IntAttr("x", d.X-3)
			m.IntAttr("y", d.Y-3)
			m.Raw(` width="6" height="6"></rect>`)
		} else {
			m.Raw(`<circle class="ch-dot"`)
			m.IntAttr("cx", d.X)
			m.IntAttr("cy", d.Y)
			m.Raw(` r="2.5"></circle>`)
		}
	}
	m.Raw(`</svg>`)
}

// pgStepGroups is the step list's body: per event, per handler, every
// step, with its SQL when the SQL panel is open.
func pgStepGroups(pv *View) templ.Component {
	return markupComponent(func(m *Markup) { drawStepGroups(m, pv) })
}

func drawStepGroups(m *Markup, pv *View) {
	sql := pv.state.Panels.Has(playurl.PanelSQL)
	m.Raw(`<ol class="pg-step-groups">`)
	for gi := range pv.steps {
		g := &pv.steps[gi]
		m.Raw(`<li class="pg-step-group"`)
		m.IntAttr("data-event", g.Event)
		m.Flag("data-current", g.Current)
		m.Flag("data-future", g.Future)
		m.Flag("data-divergent", g.Divergent)
		m.Raw(`><p class="pg-step-event"><span class="pg-event-n">`)
		m.int(g.Event)
		m.Raw(`</span> <code>`)
		m.Text(g.Text)
		m.Raw(`</code> <span class="pg-muted">tick `)
		m.int64(g.Tick)
		m.Raw(`</span> `)
		if g.Future {
			m.Raw(`<span class="pg-tag">after the cursor</span> `)
		}
		if g.Divergent {
			m.Raw(`<span class="pg-tag pg-tag-bad" data-divergence>⚑ first divergence</span>`)
		}
		m.Raw(`</p><div class="pg-step-handlers">`)
		for i, hg := range g.Handlers {
			m.Raw(`<div class="pg-step-handler"`)
			m.IntAttr("data-h", i)
			m.Raw(`><p class="pg-step-handler-name"><code>`)
			m.Text(hg.Name)
			m.Raw(`</code></p><ol class="pg-step-list">`)
			for si := range hg.Steps {
				drawStep(m, &hg.Steps[si], sql)
			}
			if len(hg.Steps) == 0 {
				m.Raw(`<li class="pg-step pg-muted">nothing happened</li>`)
			}
			m.Raw(`</ol></div>`)
		}
		m.Raw(`</div></li>`)
	}
	m.Raw(`</ol>`)
}

func drawStep(m *Markup, sv *stepView, sql bool) {
	st := sv.step
	m.Raw(`<li class="pg-step"`)
	m.Attr("data-kind", st.Kind)
	m.IntAttr("value", st.Index)
	m.Raw(` data-testid="pg-step"`)
	m.Flag("data-divergent", sv.Divergent)
	m.Raw(`>`)
	drawStepText(m, st)
	m.Raw(` `)
	switch failure := postgresFailure(st.SQLState); {
	case st.RowsAffected != nil:
		m.Raw(`<span class="pg-muted">— `)
		m.Text(english.Plural(int(*st.RowsAffected), "row", "rows"))
		m.Raw(` changed</span> `)
	case st.RowsFound != nil:
		m.Raw(`<span class="pg-muted">— `)
		m.Text(english.Plural(int(*st.RowsFound), "row", "rows"))
		m.Raw(` found</span> `)
	case failure != "":
		m.Raw(`<span class="pg-muted">— `)
		m.Text(failure)
		m.Raw(`</span> `)
	}
	if st.Effect {
		m.Raw(`<span class="pg-tag">effect committed</span> `)
	}
	if sv.Divergent {
		m.Raw(`<span class="pg-tag pg-tag-bad" data-divergence>⚑ diverges here</span> `)
	}
	if st.SQL != "" && sql {
		m.Raw(`<pre class="pg-sql" data-testid="pg-sql"><code>`)
		m.Text(st.SQL)
		m.Raw(`</code></pre><dl class="pg-sql-facts">`)
		if sv.Args != "" {
			m.Raw(`<div><dt>Bound values</dt><dd><code>`)
			m.Text(sv.Args)
			m.Raw(`</code></dd></div>`)
		}
		if st.Error != "" {
			m.Raw(`<div><dt>Error</dt><dd>`)
			m.Text(st.Error)
			m.Raw(`</dd></div>`)
		}
		for _, ch := range sv.Changes {
			m.Raw(`<div><dt>Row</dt><dd><code>`)
			m.Text(ch)
			m.Raw(`</code></dd></div>`)
		}
		m.Raw(`</dl>`)
	}
	m.Raw(`</li>`)
}

// drawStepText is a step in words: "The broker delivers msg-1 to A
// (attempt 1)", "A runs UPDATE accounts", with its note after a colon.
func drawStepText(m *Markup, st *playground.Step) {
	who := st.Worker
	if who == "" {
		who = "broker"
	}
	switch st.Kind {
	case playground.StepDeliver:
		if st.Copy > 1 {
			m.Raw("The broker delivers copy ")
			m.int(st.Copy)
			m.Raw(" of ")
		} else {
			m.Raw("The broker delivers ")
		}
		m.Text(st.Message)
		m.Raw(" to ")
		m.Text(st.Worker)
		m.Raw(" (attempt ")
		m.int(st.Attempt)
		if st.Copy > 1 {
			m.Raw(" of that copy)")
		} else {
			m.Raw(")")
		}
	case playground.StepSQL:
		m.Text(who)
		m.Raw(" runs ")
		m.Text(sqlLabel(st.SQL))
	case playground.StepBlocked:
		m.Text(who)
		if st.Error == "" { // PostgreSQL: the statement waits on a lock, no error; the note says whose
			m.Raw(" runs ")
			m.Text(sqlLabel(st.SQL))
			m.Raw(", and PostgreSQL makes it wait")
		} else {
			m.Raw(" is blocked on ")
			m.Text(sqlLabel(st.SQL))
			m.Raw(" (SQLITE_BUSY) and will retry")
		}
	default:
		m.Text(who)
		m.Raw(": ")
		m.Text(strings.ReplaceAll(st.Kind, "-", " "))
	}
	if st.Note != "" {
		m.Raw(": ")
		m.Text(st.Note)
	}
}

// pgLink draws a control: a link when it applies, a greyed label when not.
// look is how it looks: btn, primary, fault, seg or inline. A playground
// draws a few dozen of them on every click.
func pgLink(l actionLink, look string) templ.Component {
	return markupComponent(func(m *Markup) { drawLink(m, &l, look) })
}

func drawLink(m *Markup, l *actionLink, look string) {
	switch {
	case l.Href != "":
		m.Raw(`<a class="pg-ctl"`)
		m.Attr("data-look", look)
		m.Attr("href", l.Href) // a URL this package built (templ.SafeURL in a template)
		if l.Key != "" {
			m.Attr("data-key", l.Key)
			m.Attr("aria-keyshortcuts", l.Key)
		}
		if l.TestID != "" {
			m.Attr("data-testid", l.TestID)
		}
		if l.Current {
			m.Raw(` aria-current="true"`)
		}
		m.Attr("title", l.Title)
		m.Raw(`>`)
		m.Text(l.Label)
		m.Raw(` `)
		if len(l.Key) == 1 {
			m.Raw(`<kbd class="pg-key" aria-hidden="true">`)
			m.Text(l.Key)
			m.Raw(`</kbd>`)
		}
		m.Raw(`</a>`)
	case l.Reason != "":
		m.Raw(`<span class="pg-ctl"`)
		m.Attr("data-look", look)
		m.Raw(` aria-disabled="true"`)
		m.Attr("data-testid", l.TestID)
		m.Attr("data-reason", l.Reason)
		m.Raw(` title="Not now: `)
		m.Text(l.Reason)
		m.Raw(`">`)
		m.Text(l.Label)
		m.Raw(`<span class="visually-hidden">, not now: `)
		m.Text(l.Reason)
		m.Raw(`</span></span>`)
	default:
		m.Raw(`<span class="pg-ctl"`)
		m.Attr("data-look", look)
		m.Raw(` aria-disabled="true" title="`)
		m.Text(l.Title)
		m.Raw(` (not possible now)">`)
		m.Text(l.Label)
		m.Raw(`</span>`)
	}
}

// drawKeys is the keyboard shortcuts' popover; its list is the same on
// every click, drawn once (keysHelpList).
func drawKeys(m *Markup, pv *View) {
	m.Raw(`<div class="pg-keys" id="`)
	m.Text(pv.id)
	m.Raw(`-keys" popover data-testid="pg-keys"><p class="pg-keys-title">Keyboard shortcuts</p><p class="pg-muted">They act on the playground that has the focus`)
	m.Text(pgKeysWhere(pv))
	m.Raw(`.</p>`)
	m.Raw(keysHelpList())
	m.Raw(`<button type="button" class="button" popovertarget="`)
	m.Text(pv.id)
	m.Raw(`-keys" popovertargetaction="hide">Close</button></div>`)
}

// keysHelpList is keysHelp as a definition list.
var keysHelpList = sync.OnceValue(func() string {
	m := &Markup{}
	m.Raw(`<dl>`)
	for _, k := range keysHelp {
		m.Raw(`<div><dt><kbd>`)
		m.Text(k.Key)
		m.Raw(`</kbd></dt><dd>`)
		m.Text(k.Label)
		m.Raw(`</dd></div>`)
	}
	m.Raw(`</dl>`)
	return string(m.B)
})

// drawRows draws a ledger's rows panel: how its handler works, and its tables,
// a cell each per column and row.
func drawRows(m *Markup, h *handlerView) {
	m.Raw(`<div class="pg-ledger-more" data-testid="pg-rows"><p class="pg-ledger-desc">`)
	m.Text(h.Description)
	if h.Idempotent {
		m.Raw(` <span class="pg-tag">idempotent</span></p>`)
	} else {
		m.Raw(` <span class="pg-tag pg-tag-warn">not idempotent</span></p>`)
	}
	for ti := range h.Tables {
		t := &h.Tables[ti]
		m.Raw(`<div class="pg-table-wrap"><table class="pg-table"`)
		m.Attr("data-table", t.Name)
		m.Raw(`><caption>`)
		m.Text(t.Name)
		m.Raw(`</caption> <thead><tr>`)
		for _, col := range t.Columns {
			m.Raw(`<th scope="col">`)
			m.Text(col)
			m.Raw(`</th>`)
		}
		m.Raw(`</tr></thead> <tbody>`)
		for _, r := range t.Rows {
			if r.Changed {
				m.Raw(`<tr class="is-changed" data-changed>`)
			} else {
				m.Raw(`<tr>`)
			}
			for i, cell := range r.Cells {
				if i > 0 {
					m.Raw(`<td>`)
					m.Text(cell)
					m.Raw(`</td>`)
					continue
				}
				m.Raw(`<th scope="row">`)
				m.Text(cell)
				m.Raw(` `)
				if r.Changed {
					m.Raw(`<span class="visually-hidden">(changed by this event)</span>`)
				}
				m.Raw(`</th>`)
			}
			m.Raw(`</tr>`)
		}
		if len(t.Rows) == 0 {
			m.Raw(`<tr class="pg-empty"><td colspan="`)
			m.int(len(t.Columns))
			m.Raw(`">no rows</td></tr>`)
		}
		m.Raw(`</tbody></table></div>`)
	}
	m.Raw(`</div>`)
}
