package web

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
// or a GET form to the next state (see pgstate.go); playground.js turns
// them into in-place swaps of this figure. Its default state in a lesson
// fits one laptop screen: the verdicts and the ledgers beside the
// controls, every other view a panel (pgViews) drawn only when open.
//
// Class attributes are constant strings: what varies (a verdict, a hue, the
// cursor) is a data attribute the stylesheet selects on.
func livePlaygroundRun(pv *playgroundView) templ.Component {
	return markupRender(func(ctx context.Context, m *markup) error { return drawLivePlayground(ctx, m, pv) })
}

func drawLivePlayground(ctx context.Context, m *markup, pv *playgroundView) error {
	if pv.predict != nil && pv.predict.Hiding {
		m.raw(`<figure class="playground pg pg-predicting"`)
	} else {
		m.raw(`<figure class="playground pg"`)
	}
	m.attr("id", pv.id)
	m.raw(` data-testid="playground"`)
	m.attr("data-scenario", pv.state.Scenario)
	m.raw(` data-handlers="`)
	for i := range pv.trace.Handlers {
		if i > 0 {
			m.raw(",")
		}
		m.text(pv.trace.Handlers[i].Name)
	}
	m.raw(`"`)
	m.attr("data-script", pv.state.ScriptText())
	m.raw(` data-pg`)
	m.attr("data-url", pv.self)
	m.attr("data-home", pv.homeHref())
	m.intAttr("data-at", pv.at)
	m.intAttr("data-total", pv.total)
	m.attr("data-show", pv.state.Panels.String())
	m.flag("data-wide", !pv.place.InLesson())
	m.raw(` aria-labelledby="`)
	m.text(pv.id)
	m.raw(`-title"><a class="skip-link pg-skip" href="#`)
	m.text(pv.id)
	m.raw(`-end" data-testid="pg-skip" data-no-swap>Skip past this playground</a><div class="playground-head pg-head"><span class="playground-badge">`)
	m.raw(iconPlaySVG())
	m.raw(`<span class="pg-badge-word">Playground</span></span><h2 class="pg-title" id="`)
	m.text(pv.id)
	m.raw(`-title">`)
	m.text(pv.scenario.Title)
	m.raw(`</h2><dl class="playground-facts"><div><dt>Scenario</dt><dd><code data-testid="playground-scenario">`)
	m.text(pv.scenario.Name)
	m.raw(`</code></dd></div><div><dt>Clock</dt><dd data-testid="pg-clock">tick `)
	m.int64(pv.clock)
	m.raw(` <span class="pg-muted">(`)
	m.text(pv.tickUnit)
	m.raw(`s)</span></dd></div></dl><div class="pg-head-actions"><a class="pg-chip-button"`)
	m.attr("href", pv.self)
	m.raw(` data-permalink data-testid="pg-permalink" title="A link to exactly this state">`)
	m.raw(iconLinkSVG())
	m.raw(`<span>Permalink</span></a> `)
	if pv.fullSize != "" {
		m.raw(`<a class="pg-chip-button"`)
		m.attr("href", pv.fullSize)
		m.raw(` data-testid="pg-full-size" data-no-swap title="Open this state in the full-size playground">`)
		m.raw(iconExpandSVG())
		m.raw(`<span>Full size</span></a> `)
	}
	m.raw(`<a class="pg-chip-button"`)
	m.attr("href", pv.oembed)
	m.raw(` data-embed data-no-swap data-testid="pg-embed" title="Copy the code that embeds exactly this state in another page (an iframe that sizes itself)"><span>Embed</span></a> <button type="button" class="pg-chip-button needs-js" popovertarget="`)
	m.text(pv.id)
	m.raw(`-keys" data-testid="pg-help-button" aria-label="Keyboard shortcuts" title="Keyboard shortcuts (?)"><span aria-hidden="true">?</span></button></div></div>`)
	drawKeys(m, pv)
	for _, c := range [...]templ.Component{pgGoals(pv), pgPredict(pv), pgExerciseBack(pv)} {
		if err := c.Render(ctx, m); err != nil {
			return err
		}
	}
	if !pv.place.InLesson() {
		m.raw(`<p class="pg-story" data-testid="pg-story">`)
		m.text(pv.scenario.Story)
		m.raw(`</p>`)
	}
	drawTimeline(m, pv)
	m.raw(`<div class="pg-grid">`)
	drawVerdicts(m, pv)
	drawLedgers(m, pv)
	drawViews(m, pv)
	if err := drawControls(ctx, m, pv); err != nil {
		return err
	}
	m.raw(`</div>`)
	if pv.state.Panels.Has(playurl.PanelDiagram) {
		drawDiagram(m, pv)
	}
	if pv.state.Panels.Has(playurl.PanelSteps) {
		drawStepList(m, pv)
	}
	m.raw(`<p class="visually-hidden" data-testid="pg-announce" data-announce>`)
	m.text(pv.announce)
	m.raw(`</p>`)
	if c := pv.caption(); c != "" {
		m.raw(`<figcaption data-testid="playground-caption">`)
		m.text(c)
		m.raw(`</figcaption>`)
	}
	m.raw(`<span class="pg-end" id="`)
	m.text(pv.id)
	m.raw(`-end" tabindex="-1" data-testid="pg-end"></span></figure>`)
	return nil
}

// The header's icons, templates (pgicons.templ) rendered once.
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
func drawTimeline(m *markup, pv *playgroundView) {
	m.raw(`<div class="pg-timeline" role="group" aria-label="Events of the script" data-testid="pg-timeline"><div class="pg-timeline-bar">`)
	drawNavLink(m, &pv.controls.Back, "‹")
	m.raw(`<ol class="pg-events" data-testid="playground-script"><li class="pg-event"`)
	if pv.at == 0 {
		m.raw(` data-current><span class="pg-event-link" aria-current="step"><span class="pg-event-n">0</span> start</span>`)
	} else {
		m.raw(`><a class="pg-event-link"`)
		m.attr("href", pv.controls.StartOver.Href)
		m.attr("title", pv.controls.StartOver.Title)
		m.raw(` data-key="Home" data-testid="pg-start-over"><span class="pg-event-n">0</span> start</a>`)
	}
	m.raw(`</li>`)
	for i := range pv.events {
		ev := &pv.events[i]
		m.raw(`<li class="pg-event"`)
		m.intAttr("data-event", ev.Index)
		m.raw(` data-testid="pg-event"`)
		m.flag("data-current", ev.Current)
		m.flag("data-future", ev.Future)
		m.flag("data-divergent", ev.Divergent)
		if ev.Current {
			m.raw(`><span class="pg-event-link" aria-current="step"><span class="pg-event-n">`)
			m.int(ev.Index)
			m.raw(`</span> `)
			m.text(ev.Text)
			m.raw(`</span> `)
		} else {
			m.raw(`><a class="pg-event-link"`)
			m.attr("href", ev.Href)
			m.raw(`><span class="pg-event-n">`)
			m.int(ev.Index)
			m.raw(`</span> `)
			m.text(ev.Text)
			m.raw(`</a> `)
		}
		if ev.Divergent {
			m.raw(`<span class="pg-flag" title="First divergence">` + iconFlagSVG + `<span class="visually-hidden">first divergence</span></span>`)
		}
		m.raw(`</li>`)
	}
	m.raw(`</ol>`)
	drawNavLink(m, &pv.controls.Forward, "›")
	m.raw(`</div><p class="pg-timeline-status">`)
	if pv.at == pv.total {
		m.raw(`Showing the state after all `)
		m.text(english.Plural(pv.total, "event", "events"))
		m.raw(`.`)
	} else {
		m.raw(`<strong>Showing event `)
		m.int(pv.at)
		m.raw(` of `)
		m.int(pv.total)
		m.raw(`.</strong> A new event replaces the `)
		m.text(english.Plural(pv.total-pv.at, "event", "events"))
		m.raw(` after it.`)
		drawLink(m, &pv.controls.Latest, "inline")
	}
	m.raw(`</p></div>`)
}

// drawNavLink is Back or Forward: a glyph link, or the glyph greyed.
func drawNavLink(m *markup, l *actionLink, glyph string) {
	if l.Href == "" {
		m.raw(`<span class="pg-nav" data-disabled aria-hidden="true">`)
		m.text(glyph)
		m.raw(`</span>`)
		return
	}
	m.raw(`<a class="pg-nav"`)
	m.attr("href", l.Href)
	m.attr("data-key", l.Key)
	m.attr("data-testid", l.TestID)
	m.attr("title", l.Title)
	m.raw(`><span aria-hidden="true">`)
	m.text(glyph)
	m.raw(`</span><span class="visually-hidden">`)
	m.text(l.Label)
	m.raw(`</span></a>`)
}

// pgVerdicts are the verdicts and the first divergence: on a phone they
// stick under the header while the controls below them are used.
func pgVerdicts(pv *playgroundView) templ.Component {
	return markupComponent(func(m *markup) { drawVerdicts(m, pv) })
}

func drawVerdicts(m *markup, pv *playgroundView) {
	m.raw(`<ul class="pg-verdicts" data-testid="playground-handlers" aria-label="Verdicts">`)
	for _, h := range pv.handlers {
		m.raw(`<li class="pg-verdict"`)
		drawHandlerAttrs(m, h)
		m.raw(` data-testid="pg-verdict">`)
		m.raw(verdictIconSVG(h.Verdict))
		m.raw(`<div class="pg-verdict-text"><p class="pg-verdict-head"><code class="pg-handler-name">`)
		m.text(h.Name)
		m.raw(`</code> <span class="pg-verdict-label" data-testid="pg-verdict-label">`)
		m.text(h.Label)
		m.raw(`</span> `)
		if h.Expect != "" {
			m.raw(`<span class="verdict"`)
			m.attr("data-expect", h.Expect)
			m.raw(` data-testid="playground-expect" title="What the lesson expects at the end of its script">lesson expects: `)
			m.text(h.Expect)
			m.raw(`</span>`)
		}
		m.raw(`</p><p class="pg-verdict-sentence" data-testid="pg-verdict-text">`)
		m.text(h.Sentence)
		m.raw(`</p></div></li>`)
	}
	m.raw(`</ul>`)
	if pv.div != nil {
		m.raw(`<p class="pg-divergence-note" data-testid="pg-divergence"`)
		m.intAttr("data-event", pv.div.Event)
		m.raw(`>` + iconFlagSVG + `<span><strong>First divergence:</strong> `)
		m.text(pv.div.Text)
		m.raw(` — <code>`)
		m.text(pv.div.Handler)
		m.raw(`</code>, step `)
		m.int(pv.div.Step)
		m.raw(`: `)
		m.text(pv.div.Detail)
		m.raw(`.</span></p>`)
	}
}

// drawHandlerAttrs writes the attributes a handler's verdict and ledger
// both carry: its column, its name and its verdict.
func drawHandlerAttrs(m *markup, h *handlerView) {
	m.intAttr("data-h", h.Index)
	m.attr("data-handler", h.Name)
	m.attr("data-verdict", h.Verdict)
}

// drawLedgers draws each handler's ledger: its verdict, its figures against
// the expected ones, and its rows and chart when their panels are open.
func drawLedgers(m *markup, pv *playgroundView) {
	rows, chart := pv.state.Panels.Has(playurl.PanelRows), pv.state.Panels.Has(playurl.PanelChart)
	m.raw(`<section class="pg-ledgers" aria-label="Ledgers" data-testid="pg-ledgers">`)
	for _, h := range pv.handlers {
		m.raw(`<article class="pg-ledger"`)
		drawHandlerAttrs(m, h)
		m.raw(` data-testid="pg-ledger"><div class="pg-ledger-head"><h3><code>`)
		m.text(h.Name)
		m.raw(`</code></h3><span class="pg-badge">`)
		m.raw(verdictIconSVG(h.Verdict))
		m.raw(` `)
		m.text(h.Label)
		m.raw(`</span></div>`)
		if h.Divergence != nil {
			m.raw(`<p class="pg-ledger-div" data-divergence>` + iconFlagSVG + ` Diverged at event `)
			m.int(h.Divergence.Event)
			m.raw(`, step `)
			m.int(h.Divergence.Step)
			m.raw(`</p>`)
		}
		m.raw(`<dl class="pg-figures">`)
		for _, f := range h.Figures {
			m.raw(`<div data-testid="pg-figure"`)
			m.flag("data-wrong", f.Differs)
			m.raw(`><dt>`)
			m.text(f.Label)
			m.raw(`</dt><dd><span class="pg-figure-actual" data-testid="pg-figure-actual">`)
			m.text(f.Actual)
			m.raw(`</span> `)
			if f.Differs {
				m.raw(`<span class="pg-figure-expected">expected `)
				m.text(f.Expected)
				m.raw(`</span>`)
			} else {
				m.raw(`<span class="pg-figure-expected">as expected</span>`)
			}
			m.raw(`</dd></div>`)
		}
		m.raw(`</dl>`)
		if rows {
			drawRows(m, h)
		}
		if chart {
			drawChartPanel(m, h)
		}
		m.raw(`</article>`)
	}
	m.raw(`</section>`)
}

// drawChartPanel is a ledger's chart panel: its title, the drawing and
// its legend.
func drawChartPanel(m *markup, h *handlerView) {
	m.raw(`<div class="pg-chart-wrap" data-testid="pg-chart-panel"><p class="pg-chart-title">`)
	m.text(h.Chart.Label)
	m.raw(` after each event</p>`)
	drawChart(m, &h.Chart)
	m.raw(`<p class="pg-chart-legend" aria-hidden="true"><span class="lg-actual">actual</span> <span class="lg-expected">expected</span> <span class="lg-wrong">differs</span></p></div>`)
}

// drawViews draws the panels' toggles: links to this state with the panel
// opened or closed, which playground.js follows in place without adding
// to the history (Undo undoes events, not views).
func drawViews(m *markup, pv *playgroundView) {
	m.raw(`<div class="pg-views" role="group" aria-label="Views of this run" data-testid="pg-views"><span class="pg-muted">Show:</span> `)
	for i := range pv.toggles {
		drawToggle(m, &pv.toggles[i])
	}
	m.raw(`</div>`)
}

func drawToggle(m *markup, t *panelToggle) {
	m.raw(`<a class="pg-view"`)
	m.attr("href", t.Href)
	m.attr("data-panel", t.Name)
	m.attr("data-testid", t.TestID)
	m.attr("title", t.Title)
	if t.Open {
		m.raw(` aria-expanded="true">`)
	} else {
		m.raw(` aria-expanded="false">`)
	}
	m.text(t.Label)
	m.raw(`</a>`)
}

// drawStepList draws the step list panel, the diagram's text equivalent; the
// SQL of every statement is a panel of its own inside it.
func drawStepList(m *markup, pv *playgroundView) {
	m.raw(`<section class="pg-steps" id="`)
	m.text(pv.id)
	m.raw(`-steps" aria-labelledby="`)
	m.text(pv.id)
	m.raw(`-steps-title" data-testid="pg-steps"><div class="pg-steps-head"><h3 class="pg-section-title" id="`)
	m.text(pv.id)
	m.raw(`-steps-title">Step by step: every statement</h3>`)
	drawToggle(m, &pv.sqlToggle)
	m.raw(`</div>`)
	drawStepGroups(m, pv)
	m.raw(`</section>`)
}

// drawControls draws the messages' controls, the faults on the last delivery,
// the control panels, the script's editor, Reset and Undo.
func drawControls(ctx context.Context, m *markup, pv *playgroundView) error {
	m.raw(`<section class="pg-controls" aria-label="Controls" data-testid="pg-controls">`)
	scriptProblem := pv.problemOn("script")
	if pv.problem != nil && !scriptProblem {
		if err := pgProblem(pv).Render(ctx, m); err != nil {
			return err
		}
	}
	m.raw(`<div class="pg-panel"><h3 class="pg-panel-title">Messages</h3><p class="pg-targets" role="group" aria-label="Deliveries go to"><span class="pg-muted">Deliveries go to:</span> `)
	for i := range pv.controls.Targets {
		drawLink(m, &pv.controls.Targets[i], "seg")
	}
	m.raw(`</p>`)
	if len(pv.ledgers) > 0 {
		m.raw(`<p class="pg-targets" role="group" aria-label="Ledger" data-testid="pg-ledger-switch"><span class="pg-muted">Ledger:</span> `)
		for i := range pv.ledgers {
			drawLink(m, &pv.ledgers[i], "seg")
		}
		m.raw(`</p>`)
	}
	m.raw(`<ul class="pg-messages">`)
	for i := range pv.messages {
		msg := &pv.messages[i]
		m.raw(`<li class="pg-message"`)
		m.attr("data-message", msg.ID)
		m.raw(` data-testid="pg-message"><p class="pg-message-head"><code class="pg-msg-id">`)
		m.text(msg.ID)
		m.raw(`</code> <span class="pg-muted">`)
		m.text(msg.What)
		m.raw(`</span> <span class="pg-status" data-testid="pg-message-status">`)
		m.text(msg.Status)
		m.raw(`</span></p><p class="pg-actions">`)
		drawLink(m, &msg.Control.Deliver, "primary")
		drawLink(m, &msg.Control.Redeliver, "btn")
		drawLink(m, &msg.Control.Publish, "btn")
		if msg.Control.Redrive.Href != "" {
			drawLink(m, &msg.Control.Redrive, "btn")
		}
		m.raw(`</p></li>`)
	}
	m.raw(`</ul></div>`)
	if a := pv.controls.Amend; a != nil {
		m.raw(`<div class="pg-panel pg-faults" data-testid="pg-faults"><h3 class="pg-panel-title">Fault on <code>`)
		m.text(a.Event)
		m.raw(`</code></h3><p class="pg-actions" role="group" aria-label="Fault on the last delivery">`)
		for i := range a.Options {
			drawLink(m, &a.Options[i], "fault")
		}
		m.raw(`</p></div>`)
	}
	m.raw(`<div class="pg-more-row">`)
	for i := range pv.more {
		if err := drawMore(ctx, m, pv, i); err != nil {
			return err
		}
	}
	m.raw(`<details class="pg-panel pg-more"`)
	m.flag("open", scriptProblem)
	m.raw(`><summary class="pg-panel-title">Edit the script</summary><form class="pg-script-form" method="get"`)
	m.attr("action", pv.controls.FormAction)
	m.raw(` data-testid="pg-script-form">`)
	drawHidden(m, pv.place.FormFields(pv.state, playurl.KeyScript, playurl.KeyAt))
	m.raw(`<input type="hidden"`)
	m.attr("name", playurl.KeyWas)
	m.attr("value", pv.state.ScriptText())
	m.raw(`> <label class="pg-label" for="`)
	m.text(pv.id)
	m.raw(`-script">One event per line or separated by <code>;</code></label> <textarea id="`)
	m.text(pv.id)
	m.raw(`-script"`)
	if scriptProblem {
		m.raw(` name="script" rows="4" spellcheck="false" autocapitalize="off" aria-invalid="true" aria-describedby="`)
		m.text(pv.id)
		m.raw(`-problem"`)
		m.intAttr("data-error-line", pv.problem.Line)
		m.raw(`>`)
		m.text(pv.problem.Text)
		m.raw(`</textarea>`)
		if err := pgProblem(pv).Render(ctx, m); err != nil {
			return err
		}
	} else {
		m.raw(` name="script" rows="4" spellcheck="false" autocapitalize="off">`)
		m.text(pv.scriptLines())
		m.raw(`</textarea> `)
	}
	m.raw(`<button type="submit" class="pg-btn pg-btn-primary">Run this script</button></form></details><p class="pg-actions pg-bottom-actions">`)
	drawLink(m, &pv.controls.Reset, "btn")
	m.raw(`<button type="button" class="pg-btn needs-js" data-undo aria-keyshortcuts="u"`)
	m.attr("title", pv.controls.Undo.Title)
	m.raw(`>Undo <kbd class="pg-key" aria-hidden="true">u</kbd></button></p></div></section>`)
	return nil
}

// pgMore is control panel i (moreNames, pgmore.go): open with its
// contents, or closed with a link to this state with it open, which
// playground.js replaces by fetching the panel when it opens.
func pgMore(pv *playgroundView, i int) templ.Component {
	return markupRender(func(ctx context.Context, m *markup) error { return drawMore(ctx, m, pv, i) })
}

func drawMore(ctx context.Context, m *markup, pv *playgroundView, i int) error {
	p := &pv.more[i]
	m.raw(`<details class="pg-panel pg-more"`)
	m.attr("data-more", p.Name)
	m.raw(` data-testid="pg-more"`)
	m.flag("open", p.Open)
	m.raw(`><summary class="pg-panel-title">`)
	m.text(p.Label)
	m.raw(`</summary> `)
	if !p.Open {
		m.raw(`<p class="pg-more-open"><a`)
		m.attr("href", p.Href)
		m.raw(` data-more-open data-testid="pg-more-open">Show these controls</a></p></details>`)
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
	m.raw(`</details>`)
	return nil
}

// pgHidden is a GET form's state: a hidden input per field.
func pgHidden(fields []playurl.Field) templ.Component {
	return markupComponent(func(m *markup) { drawHidden(m, fields) })
}

func drawHidden(m *markup, fields []playurl.Field) {
	for _, f := range fields {
		m.raw(`<input type="hidden"`)
		m.attr("name", f.Name)
		m.attr("value", f.Value)
		m.raw(`>`)
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
