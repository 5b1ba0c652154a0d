package playview

import (
	"context"
	"idemlab/web/playurl"
	"strings"
	"sync"

	"github.com/a-h/templ"

	"idemlab/internal/english"
)

// The parts of the live playground drawn on every click: the timeline,
// the verdicts, the ledgers, the panels' toggles and the controls, drawn
// with markup (markup.go says why) into one buffer. The rarer parts inside
// them (a rejected input, the closed control panels) are still templates,
// rendered into the same buffer. TestLiveFragment_RenderingsUnchanged
// proved them byte for byte the templates' output when they moved here.

// livePlaygroundRun is the interactive playground: the same component in a
// lesson, at /playground and at /embed/playground. Every control is a link
// or a GET form to the next state (see package playurl); playground.js turns
// them into in-place swaps of this figure. Its default state in a lesson
// fits one laptop screen: the verdicts and the ledgers beside the
// controls, every other view a panel (pgViews) drawn only when open.
//
// Class attributes are constant strings: what varies (a verdict, a hue, the
// cursor) is a data attribute the stylesheet selects on.
func livePlaygroundRun(pv *View) templ.Component {
	return markupRender(func(ctx context.Context, m *Markup) error { return drawLivePlayground(ctx, m, pv) })
}

func drawLivePlayground(ctx context.Context, m *Markup, pv *View) error {
	if pv.predict != nil && pv.predict.Hiding {
		m.Raw(`<figure class="playground pg pg-predicting"`)
	} else {
		m.Raw(`<figure class="playground pg"`)
	}
	m.Attr("id", pv.id)
	m.Raw(` data-testid="playground"`)
	m.Attr("data-scenario", pv.state.Scenario)
	m.Raw(` data-handlers="`)
	for i := range pv.trace.Handlers {
		if i > 0 {
			m.Raw(",")
		}
		m.Text(pv.trace.Handlers[i].Name)
	}
	m.Raw(`"`)
	m.Attr("data-script", pv.state.ScriptText())
	m.Raw(` data-pg`)
	m.Attr("data-url", pv.self)
	m.Attr("data-home", pv.homeHref())
	m.IntAttr("data-at", pv.at)
	m.IntAttr("data-total", pv.total)
	m.Attr("data-show", pv.state.Panels.String())
	m.Flag("data-wide", !pv.Place.InLesson())
	m.Raw(` aria-labelledby="`)
	m.Text(pv.id)
	m.Raw(`-title"><a class="skip-link pg-skip" href="#`)
	m.Text(pv.id)
	m.Raw(`-end" data-testid="pg-skip" data-no-swap>Skip past this playground</a><div class="playground-head pg-head"><span class="playground-badge">`)
	m.Raw(iconPlaySVG())
	m.Raw(`<span class="pg-badge-word">Playground</span></span><h2 class="pg-title" id="`)
	m.Text(pv.id)
	m.Raw(`-title">`)
	m.Text(pv.scenario.Title)
	m.Raw(`</h2><dl class="playground-facts"><div><dt>Scenario</dt><dd><code data-testid="playground-scenario">`)
	m.Text(pv.scenario.Name)
	m.Raw(`</code></dd></div><div><dt>Clock</dt><dd data-testid="pg-clock">tick `)
	m.int64(pv.clock)
	m.Raw(` <span class="pg-muted">(`)
	m.Text(pv.tickUnit)
	m.Raw(`s)</span></dd></div></dl><div class="pg-head-actions"><a class="pg-chip-button"`)
	m.Attr("href", pv.self)
	m.Raw(` data-permalink data-testid="pg-permalink" title="A link to exactly this state">`)
	m.Raw(iconLinkSVG())
	m.Raw(`<span>Permalink</span></a> `)
	if pv.fullSize != "" {
		m.Raw(`<a class="pg-chip-button"`)
		m.Attr("href", pv.fullSize)
		m.Raw(` data-testid="pg-full-size" data-no-swap title="Open this state in the full-size playground">`)
		m.Raw(iconExpandSVG())
		m.Raw(`<span>Full size</span></a> `)
	}
	m.Raw(`<a class="pg-chip-button"`)
	m.Attr("href", pv.oembed)
	m.Raw(` data-embed data-no-swap data-testid="pg-embed" title="Copy the code that embeds exactly this state in another page (an iframe that sizes itself)"><span>Embed</span></a> <button type="button" class="pg-chip-button needs-js" popovertarget="`)
	m.Text(pv.id)
	m.Raw(`-keys" data-testid="pg-help-button" aria-label="Keyboard shortcuts" title="Keyboard shortcuts (?)"><span aria-hidden="true">?</span></button></div></div>`)
	drawKeys(m, pv)
	for _, c := range [...]templ.Component{pgGoals(pv), pgPredict(pv), pgExerciseBack(pv)} {
		if err := c.Render(ctx, m); err != nil {
			return err
		}
	}
	if !pv.Place.InLesson() {
		m.Raw(`<p class="pg-story" data-testid="pg-story">`)
		m.Text(pv.scenario.Story)
		m.Raw(`</p>`)
	}
	drawTimeline(m, pv)
	m.Raw(`<div class="pg-grid">`)
	drawVerdicts(m, pv)
	drawLedgers(m, pv)
	drawViews(m, pv)
	if err := drawControls(ctx, m, pv); err != nil {
		return err
	}
	m.Raw(`</div>`)
	if pv.state.Panels.Has(playurl.PanelDiagram) {
		drawDiagram(m, pv)
	}
	if pv.state.Panels.Has(playurl.PanelSteps) {
		drawStepList(m, pv)
	}
	m.Raw(`<p class="visually-hidden" data-testid="pg-announce" data-announce`)
	if pv.hiddenVerdicts != "" {
		m.Attr("data-verdicts", pv.hiddenVerdicts)
	}
	m.Raw(`>`)
	m.Text(pv.announce)
	m.Raw(`</p>`)
	if c := pv.caption(); c != "" {
		m.Raw(`<figcaption data-testid="playground-caption">`)
		m.Text(c)
		m.Raw(`</figcaption>`)
	}
	m.Raw(`<span class="pg-end" id="`)
	m.Text(pv.id)
	m.Raw(`-end" tabindex="-1" data-testid="pg-end"></span></figure>`)
	return nil
}

// The header's icons, templates (icons.templ) rendered once.
var (
	iconPlaySVG   = renderedOnce(iconPlay())
	iconLinkSVG   = renderedOnce(iconLink())
	iconExpandSVG = renderedOnce(iconExpand())
)

// renderedOnce is c's markup, rendered on first use: c depends on nothing
// but itself.
func renderedOnce(c templ.Component) func() string {
	return sync.OnceValue(func() string {
		var b strings.Builder
		if err := c.Render(context.Background(), &b); err != nil {
			panic(err) // a constant template that fails is our bug, found by any test
		}
		return b.String()
	})
}

// drawTimeline draws the script's events as links to each cursor, with Back
// and Forward, and where the cursor stands.
func drawTimeline(m *Markup, pv *View) {
	m.Raw(`<div class="pg-timeline" role="group" aria-label="Events of the script" data-testid="pg-timeline"><div class="pg-timeline-bar">`)
	drawNavLink(m, &pv.controls.Back, "‹")
	m.Raw(`<ol class="pg-events" data-testid="playground-script"><li class="pg-event"`)
	if pv.at == 0 {
		m.Raw(` data-current><span class="pg-event-link" aria-current="step"><span class="pg-event-n">0</span> start</span>`)
	} else {
		m.Raw(`><a class="pg-event-link"`)
		m.Attr("href", pv.controls.StartOver.Href)
		m.Attr("title", pv.controls.StartOver.Title)
		m.Raw(` data-key="Home" data-testid="pg-start-over"><span class="pg-event-n">0</span> start</a>`)
	}
	m.Raw(`</li>`)
	for i := range pv.events {
		ev := &pv.events[i]
		m.Raw(`<li class="pg-event"`)
		m.IntAttr("data-event", ev.Index)
		m.Raw(` data-testid="pg-event"`)
		m.Flag("data-current", ev.Current)
		m.Flag("data-future", ev.Future)
		m.Flag("data-divergent", ev.Divergent)
		if ev.Current {
			m.Raw(`><span class="pg-event-link" aria-current="step"><span class="pg-event-n">`)
			m.int(ev.Index)
			m.Raw(`</span> `)
			m.Text(ev.Text)
			m.Raw(`</span> `)
		} else {
			m.Raw(`><a class="pg-event-link"`)
			m.Attr("href", ev.Href)
			m.Raw(`><span class="pg-event-n">`)
			m.int(ev.Index)
			m.Raw(`</span> `)
			m.Text(ev.Text)
			m.Raw(`</a> `)
		}
		if ev.Divergent {
			m.Raw(`<span class="pg-flag" title="First divergence">` + iconFlagSVG + `<span class="visually-hidden">first divergence</span></span>`)
		}
		m.Raw(`</li>`)
	}
	m.Raw(`</ol>`)
	drawNavLink(m, &pv.controls.Forward, "›")
	m.Raw(`</div><p class="pg-timeline-status">`)
	if pv.at == pv.total {
		m.Raw(`Showing the state after all `)
		m.Text(english.Plural(pv.total, "event", "events"))
		m.Raw(`.`)
	} else {
		m.Raw(`<strong>Showing event `)
		m.int(pv.at)
		m.Raw(` of `)
		m.int(pv.total)
		m.Raw(`.</strong> A new event replaces the `)
		m.Text(english.Plural(pv.total-pv.at, "event", "events"))
		m.Raw(` after it.`)
		drawLink(m, &pv.controls.Latest, "inline")
	}
	m.Raw(`</p></div>`)
}

// drawNavLink is Back or Forward: a glyph link, or the glyph greyed.
func drawNavLink(m *Markup, l *actionLink, glyph string) {
	if l.Href == "" {
		m.Raw(`<span class="pg-nav" data-disabled aria-hidden="true">`)
		m.Text(glyph)
		m.Raw(`</span>`)
		return
	}
	m.Raw(`<a class="pg-nav"`)
	m.Attr("href", l.Href)
	m.Attr("data-key", l.Key)
	m.Attr("data-testid", l.TestID)
	m.Attr("title", l.Title)
	m.Raw(`><span aria-hidden="true">`)
	m.Text(glyph)
	m.Raw(`</span><span class="visually-hidden">`)
	m.Text(l.Label)
	m.Raw(`</span></a>`)
}

// pgVerdicts are the verdicts and the first divergence: on a phone they
// stick under the header while the controls below them are used.
func pgVerdicts(pv *View) templ.Component {
	return markupComponent(func(m *Markup) { drawVerdicts(m, pv) })
}

func drawVerdicts(m *Markup, pv *View) {
	m.Raw(`<ul class="pg-verdicts" data-testid="playground-handlers" aria-label="Verdicts">`)
	for _, h := range pv.handlers {
		m.Raw(`<li class="pg-verdict"`)
		drawHandlerAttrs(m, h)
		m.Raw(` data-testid="pg-verdict">`)
		m.Raw(verdictIconSVG(h.Verdict))
		m.Raw(`<div class="pg-verdict-text"><p class="pg-verdict-head"><code class="pg-handler-name">`)
		m.Text(h.Name)
		m.Raw(`</code> <span class="pg-verdict-label" data-testid="pg-verdict-label">`)
		m.Text(h.Label)
		m.Raw(`</span> `)
		if h.Expect != "" {
			m.Raw(`<span class="verdict"`)
			m.Attr("data-expect", h.Expect)
			m.Raw(` data-testid="playground-expect" title="What the lesson expects at the end of its script">lesson expects: `)
			m.Text(h.Expect)
			m.Raw(`</span>`)
		}
		m.Raw(`</p><p class="pg-verdict-sentence" data-testid="pg-verdict-text">`)
		m.Text(h.Sentence)
		m.Raw(`</p></div></li>`)
	}
	m.Raw(`</ul>`)
	if pv.div != nil {
		m.Raw(`<p class="pg-divergence-note" data-testid="pg-divergence"`)
		m.IntAttr("data-event", pv.div.Event)
		m.Raw(`>` + iconFlagSVG + `<span><strong>First divergence:</strong> `)
		m.Text(pv.div.Text)
		m.Raw(` — <code>`)
		m.Text(pv.div.Handler)
		m.Raw(`</code>, step `)
		m.int(pv.div.Step)
		m.Raw(`: `)
		m.Text(pv.div.Detail)
		m.Raw(`.</span></p>`)
	}
}

// drawHandlerAttrs writes the attributes a handler's verdict and ledger
// both carry: its column, its name and its verdict.
func drawHandlerAttrs(m *Markup, h *handlerView) {
	m.IntAttr("data-h", h.Index)
	m.Attr("data-handler", h.Name)
	m.Attr("data-verdict", h.Verdict)
}

// regionLabel names one of the playground's landmarks by its block, so that
// a page of several playgrounds (even of one scenario) has landmarks a
// screen reader can tell apart: "Ledgers, playground 2: Lost ack" in a
// lesson, "Ledgers: Lost ack" on the playground's own page.
func (pv *View) regionLabel(region string) string {
	if n, ok := strings.CutPrefix(pv.Place.Block, "pg-"); ok && pv.Place.InLesson() {
		return region + ", playground " + n + ": " + pv.scenario.Title
	}
	return region + ": " + pv.scenario.Title
}

// drawLedgers draws each handler's ledger: its verdict, its figures against
// the expected ones, and its rows and chart when their panels are open.
func drawLedgers(m *Markup, pv *View) {
	rows, chart := pv.state.Panels.Has(playurl.PanelRows), pv.state.Panels.Has(playurl.PanelChart)
	m.Raw(`<section class="pg-ledgers"`)
	m.Attr("aria-label", pv.regionLabel("Ledgers"))
	m.Raw(` data-testid="pg-ledgers">`)
	for _, h := range pv.handlers {
		m.Raw(`<article class="pg-ledger"`)
		drawHandlerAttrs(m, h)
		m.Raw(` data-testid="pg-ledger"><div class="pg-ledger-head"><h3><code>`)
		m.Text(h.Name)
		m.Raw(`</code></h3><span class="pg-badge">`)
		m.Raw(verdictIconSVG(h.Verdict))
		m.Raw(` `)
		m.Text(h.Label)
		m.Raw(`</span></div>`)
		if h.Divergence != nil {
			m.Raw(`<p class="pg-ledger-div" data-divergence>` + iconFlagSVG + ` Diverged at event `)
			m.int(h.Divergence.Event)
			m.Raw(`, step `)
			m.int(h.Divergence.Step)
			m.Raw(`</p>`)
		}
		m.Raw(`<dl class="pg-figures">`)
		for _, f := range h.Figures {
			m.Raw(`<div data-testid="pg-figure"`)
			m.Flag("data-wrong", f.Differs)
			m.Raw(`><dt>`)
			m.Text(f.Label)
			m.Raw(`</dt><dd><span class="pg-figure-actual" data-testid="pg-figure-actual">`)
			m.Text(f.Actual)
			m.Raw(`</span> `)
			if f.Differs {
				m.Raw(`<span class="pg-figure-expected">expected `)
				m.Text(f.Expected)
				m.Raw(`</span>`)
			} else {
				m.Raw(`<span class="pg-figure-expected">as expected</span>`)
			}
			m.Raw(`</dd></div>`)
		}
		m.Raw(`</dl>`)
		if rows {
			drawRows(m, h)
		}
		if chart {
			drawChartPanel(m, h)
		}
		m.Raw(`</article>`)
	}
	m.Raw(`</section>`)
}

// drawChartPanel is a ledger's chart panel: its title, the drawing and
// its legend.
func drawChartPanel(m *Markup, h *handlerView) {
	m.Raw(`<div class="pg-chart-wrap" data-testid="pg-chart-panel"><p class="pg-chart-title">`)
	m.Text(h.Chart.Label)
	m.Raw(` after each event</p>`)
	drawChart(m, &h.Chart)
	m.Raw(`<p class="pg-chart-legend" aria-hidden="true"><span class="lg-actual">actual</span> <span class="lg-expected">expected</span> <span class="lg-wrong">differs</span></p></div>`)
}

// drawViews draws the panels' toggles: links to this state with the panel
// opened or closed, which playground.js follows in place without adding
// to the history (Undo undoes events, not views).
func drawViews(m *Markup, pv *View) {
	m.Raw(`<div class="pg-views" role="group" aria-label="Views of this run" data-testid="pg-views"><span class="pg-muted">Show:</span> `)
	for i := range pv.toggles {
		drawToggle(m, &pv.toggles[i])
	}
	m.Raw(`</div>`)
}

func drawToggle(m *Markup, t *panelToggle) {
	m.Raw(`<a class="pg-view"`)
	m.Attr("href", t.Href)
	m.Attr("data-panel", t.Name)
	m.Attr("data-testid", t.TestID)
	m.Attr("title", t.Title)
	if t.Open {
		m.Raw(` aria-expanded="true">`)
	} else {
		m.Raw(` aria-expanded="false">`)
	}
	m.Text(t.Label)
	m.Raw(`</a>`)
}

// drawStepList draws the step list panel, the diagram's text equivalent; the
// SQL of every statement is a panel of its own inside it.
func drawStepList(m *Markup, pv *View) {
	m.Raw(`<section class="pg-steps" id="`)
	m.Text(pv.id)
	m.Raw(`-steps"`)
	m.Attr("aria-label", pv.regionLabel("Step by step"))
	m.Raw(` data-testid="pg-steps"><div class="pg-steps-head"><h3 class="pg-section-title" id="`)
	m.Text(pv.id)
	m.Raw(`-steps-title">Step by step: every statement</h3>`)
	drawToggle(m, &pv.sqlToggle)
	m.Raw(`</div>`)
	drawStepGroups(m, pv)
	m.Raw(`</section>`)
}

// drawControls draws the messages' controls, the faults on the last delivery,
// the control panels, the script's editor, Reset and Undo.
func drawControls(ctx context.Context, m *Markup, pv *View) error {
	m.Raw(`<section class="pg-controls"`)
	m.Attr("aria-label", pv.regionLabel("Controls"))
	m.Raw(` data-testid="pg-controls">`)
	scriptProblem := pv.problemOn("script")
	if pv.problem != nil && !scriptProblem {
		if err := pgProblem(pv).Render(ctx, m); err != nil {
			return err
		}
	}
	m.Raw(`<div class="pg-panel"><h3 class="pg-panel-title">Messages</h3><p class="pg-targets" role="group" aria-label="Deliveries go to"><span class="pg-muted">Deliveries go to:</span> `)
	for i := range pv.controls.Targets {
		drawLink(m, &pv.controls.Targets[i], "seg")
	}
	m.Raw(`</p>`)
	if len(pv.ledgers) > 0 {
		m.Raw(`<p class="pg-targets" role="group" aria-label="Ledger" data-testid="pg-ledger-switch"><span class="pg-muted">Ledger:</span> `)
		for i := range pv.ledgers {
			drawLink(m, &pv.ledgers[i], "seg")
		}
		m.Raw(`</p>`)
	}
	partition := len(pv.controls.Partition) > 0
	if partition {
		// A partition is read by its owner's polls: no per-record Deliver.
		m.Raw(`<p class="pg-actions" role="group" aria-label="The partition" data-testid="pg-partition-controls">`)
		for i := range pv.controls.Partition {
			drawLink(m, &pv.controls.Partition[i], "primary")
		}
		m.Raw(`</p>`)
	}
	m.Raw(`<ul class="pg-messages">`)
	for i := range pv.messages {
		msg := &pv.messages[i]
		m.Raw(`<li class="pg-message"`)
		m.Attr("data-message", msg.ID)
		m.Raw(` data-testid="pg-message"><p class="pg-message-head"><code class="pg-msg-id">`)
		m.Text(msg.ID)
		m.Raw(`</code> <span class="pg-muted">`)
		m.Text(msg.What)
		m.Raw(`</span> <span class="pg-status" data-testid="pg-message-status">`)
		m.Text(msg.Status)
		m.Raw(`</span></p>`)
		if partition {
			m.Raw(`</li>`)
			continue
		}
		m.Raw(`<p class="pg-actions">`)
		drawLink(m, &msg.Control.Deliver, "primary")
		drawLink(m, &msg.Control.Redeliver, "btn")
		drawLink(m, &msg.Control.Publish, "btn")
		if msg.Control.Redrive.Href != "" {
			drawLink(m, &msg.Control.Redrive, "btn")
		}
		m.Raw(`</p></li>`)
	}
	m.Raw(`</ul></div>`)
	if a := pv.controls.Amend; a != nil {
		m.Raw(`<div class="pg-panel pg-faults" data-testid="pg-faults"><h3 class="pg-panel-title">Fault on <code>`)
		m.Text(a.Event)
		m.Raw(`</code></h3><p class="pg-actions" role="group" aria-label="Fault on the last delivery">`)
		for i := range a.Options {
			drawLink(m, &a.Options[i], "fault")
		}
		m.Raw(`</p></div>`)
	}
	m.Raw(`<div class="pg-more-row">`)
	for i := range pv.more {
		if err := drawMore(ctx, m, pv, i); err != nil {
			return err
		}
	}
	m.Raw(`<details class="pg-panel pg-more"`)
	m.Flag("open", scriptProblem)
	m.Raw(`><summary class="pg-panel-title">Edit the script</summary><form class="pg-script-form" method="get"`)
	m.Attr("action", pv.controls.FormAction)
	m.Raw(` data-testid="pg-script-form">`)
	drawHidden(m, pv.Place.FormFields(pv.state, playurl.KeyScript, playurl.KeyAt))
	m.Raw(`<input type="hidden"`)
	m.Attr("name", playurl.KeyWas)
	m.Attr("value", pv.state.ScriptText())
	m.Raw(`> <label class="pg-label" for="`)
	m.Text(pv.id)
	m.Raw(`-script">One event per line or separated by <code>;</code></label> <textarea id="`)
	m.Text(pv.id)
	m.Raw(`-script"`)
	if scriptProblem {
		m.Raw(` name="script" rows="4" spellcheck="false" autocapitalize="off" aria-invalid="true" aria-describedby="`)
		m.Text(pv.id)
		m.Raw(`-problem"`)
		m.IntAttr("data-error-line", pv.problem.Line)
		m.Raw(`>`)
		m.Text(pv.problem.Text)
		m.Raw(`</textarea>`)
		if err := pgProblem(pv).Render(ctx, m); err != nil {
			return err
		}
	} else {
		m.Raw(` name="script" rows="4" spellcheck="false" autocapitalize="off">`)
		m.Text(pv.scriptLines())
		m.Raw(`</textarea> `)
	}
	m.Raw(`<button type="submit" class="pg-btn pg-btn-primary">Run this script</button></form></details><p class="pg-actions pg-bottom-actions">`)
	drawLink(m, &pv.controls.Reset, "btn")
	m.Raw(`<button type="button" class="pg-btn needs-js" data-undo aria-keyshortcuts="u"`)
	m.Attr("title", pv.controls.Undo.Title)
	m.Raw(`>Undo <kbd class="pg-key" aria-hidden="true">u</kbd></button></p></div></section>`)
	return nil
}

// pgMore is control panel i (playurl.MoreNames, more.go): open with its
// contents (and, for playground.js, the state with it closed), or closed
// with a link to this state with it open.
func pgMore(pv *View, i int) templ.Component {
	return markupRender(func(ctx context.Context, m *Markup) error { return drawMore(ctx, m, pv, i) })
}

func drawMore(ctx context.Context, m *Markup, pv *View, i int) error {
	p := &pv.more[i]
	m.Raw(`<details class="pg-panel pg-more"`)
	m.Attr("data-more", p.Name)
	m.Raw(` data-testid="pg-more"`)
	m.Flag("open", p.Open)
	if p.Open {
		m.Attr("data-more-close", p.Href)
	}
	m.Raw(`><summary class="pg-panel-title">`)
	m.Text(p.Label)
	m.Raw(`</summary> `)
	if !p.Open {
		m.Raw(`<p class="pg-more-open"><a`)
		m.Attr("href", p.Href)
		m.Raw(` data-more-open data-testid="pg-more-open">Show these controls</a></p></details>`)
		return nil
	}
	var panel templ.Component
	switch playurl.MoreNames[i].Bit {
	case playurl.MoreWorkers:
		panel = pgWorkersPanel(pv)
	case playurl.MoreBroker:
		panel = pgBrokerPanel(pv)
	default:
		panel = pgHandlersPanel(pv)
	}
	if err := panel.Render(ctx, m); err != nil {
		return err
	}
	m.Raw(`</details>`)
	return nil
}

// pgHidden is a GET form's state: a hidden input per field.
func pgHidden(fields []playurl.Field) templ.Component {
	return markupComponent(func(m *Markup) { drawHidden(m, fields) })
}

func drawHidden(m *Markup, fields []playurl.Field) {
	for _, f := range fields {
		m.Raw(`<input type="hidden"`)
		m.Attr("name", f.Name)
		m.Attr("value", f.Value)
		m.Raw(`>`)
	}
}

// The playground's icons, drawn inline and hidden from assistive
// technology (the words beside each one say the same).
const (
	iconFlagSVG  = `<svg class="pg-icon-flag" viewBox="0 0 20 20" aria-hidden="true" focusable="false"><path d="M4 18V2.5M4 3h10l-2.5 3.5L14 10H4"></path></svg>`
	iconOKSVG    = `<svg class="pg-icon pg-icon-ok" viewBox="0 0 20 20" aria-hidden="true" focusable="false"><circle cx="10" cy="10" r="9"></circle><path d="M5.5 10.5l3 3 6-7"></path></svg>`
	iconWaitSVG  = `<svg class="pg-icon pg-icon-wait" viewBox="0 0 20 20" aria-hidden="true" focusable="false"><circle cx="10" cy="10" r="9"></circle><path d="M10 5v5l3.5 2"></path></svg>`
	iconTwiceSVG = `<svg class="pg-icon pg-icon-bad" viewBox="0 0 20 20" aria-hidden="true" focusable="false"><rect x="1.5" y="1.5" width="17" height="17" rx="3"></rect><path d="M7 6v8M13 6v8"></path></svg>`
	iconWarnSVG  = `<svg class="pg-icon pg-icon-bad" viewBox="0 0 20 20" aria-hidden="true" focusable="false"><path d="M10 1.8L18.6 17H1.4z"></path><path d="M10 7.5v4.5M10 14.2v.3"></path></svg>`
)

// verdictIconSVG is a verdict's icon: a tick, a clock, two bars for an
// effect applied twice, a warning for every other failure.
func verdictIconSVG(verdict string) string {
	switch verdict {
	case "ok":
		return iconOKSVG
	case "pending":
		return iconWaitSVG
	case "duplicate-effect":
		return iconTwiceSVG
	}
	return iconWarnSVG
}
