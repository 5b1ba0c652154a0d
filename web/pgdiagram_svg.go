package web

// drawDiagram draws the sequence diagram panel. It fits a lesson's width (the
// lanes are spaced to it); when a run has more lanes than fit, or more
// rows than its box, it scrolls with the lane names kept in view, and it
// always opens at its top.
//
// It is drawn with markup rather than a template: every row of it is a
// dozen numeric attributes, drawn on every click (markup.go says why).
func drawDiagram(m *markup, pv *playgroundView) {
	d := &pv.diagram
	m.raw(`<section class="pg-diagram" id="`)
	m.text(pv.id)
	m.raw(`-diagram" aria-labelledby="`)
	m.text(pv.id)
	m.raw(`-dg-title" data-testid="pg-diagram-panel"><h3 class="pg-section-title" id="`)
	m.text(pv.id)
	m.raw(`-dg-title">Sequence diagram</h3><div class="pg-scroll" tabindex="0" aria-label="Sequence diagram, scrollable" data-testid="pg-diagram-scroll">`)
	// The lane names stay in view while the diagram scrolls.
	m.raw(`<svg class="pg-dg pg-dg-lanes" viewBox="0 0 `)
	m.int(d.Width)
	m.raw(" ")
	m.int(dgHead)
	m.raw(`"`)
	m.intAttr("width", d.Width)
	m.intAttr("height", dgHead)
	m.raw(` aria-hidden="true" data-testid="pg-diagram-lanes">`)
	for _, l := range d.Lanes {
		drawLaneGroup(m, l)
		m.raw(`><text class="dg-lane-label"`)
		m.intAttr("x", l.X)
		m.raw(` y="15" text-anchor="middle">`)
		m.text(l.Label)
		m.raw(`</text> <text class="dg-lane-sub"`)
		m.intAttr("x", l.X)
		m.raw(` y="31" text-anchor="middle">`)
		m.text(l.Sub)
		m.raw(`</text></g>`)
	}
	m.raw(`</svg> <svg class="pg-dg" viewBox="0 `)
	m.int(dgHead)
	m.raw(" ")
	m.int(d.Width)
	m.raw(" ")
	m.int(d.Height - dgHead)
	m.raw(`"`)
	m.intAttr("width", d.Width)
	m.intAttr("height", d.Height-dgHead)
	m.raw(` role="img"`)
	m.attr("aria-label", d.Title)
	m.raw(` data-testid="pg-diagram"><defs><marker id="`)
	m.text(pv.id)
	m.raw(`-arrow" viewBox="0 0 10 10" refX="9" refY="5" markerWidth="7" markerHeight="7" orient="auto-start-reverse"><path d="M0,0 L10,5 L0,10 z" class="dg-head"></path></marker></defs> `)
	for _, b := range d.Bands {
		m.raw(`<g class="dg-band"`)
		m.intAttr("data-event", b.Event)
		m.flag("data-current", b.Current)
		m.flag("data-future", b.Future)
		m.flag("data-divergent", b.Divergent)
		m.raw(`><rect x="2"`)
		m.intAttr("y", b.Y)
		m.intAttr("width", d.Width-4)
		m.intAttr("height", b.H)
		m.raw(` rx="6"></rect> <text class="dg-band-label" x="10"`)
		m.intAttr("y", b.Y+17)
		m.raw(`>`)
		m.text(b.Label)
		m.raw(`</text> `)
		if b.Divergent {
			m.raw(`<text class="dg-div-label"`)
			m.intAttr("x", d.Width-12)
			m.intAttr("y", b.Y+17)
			m.raw(` text-anchor="end" data-divergence>⚑ first divergence</text>`)
		}
		m.raw(`</g> `)
	}
	for _, l := range d.Lanes {
		drawLaneGroup(m, l)
		m.raw(`><line`)
		m.intAttr("x1", l.X)
		m.intAttr("y1", dgHead)
		m.intAttr("x2", l.X)
		m.intAttr("y2", d.Height-6)
		m.raw(`></line></g> `)
	}
	for i := range d.Rows {
		drawDiagramRow(m, pv, &d.Rows[i])
	}
	m.raw(`</svg></div><p class="pg-legend pg-muted" aria-hidden="true"><span class="lg-dot">effect committed</span> <span class="lg-cross">crash / lost / refused</span> <span class="lg-ring">note</span></p></section>`)
}

// drawLaneGroup opens a lane's <g>, without its closing ">".
func drawLaneGroup(m *markup, l laneView) {
	m.raw(`<g class="dg-lane"`)
	m.attr("data-kind", l.Kind)
	if l.Kind == "ledger" {
		m.intAttr("data-h", l.Handler)
	}
}

func drawDiagramRow(m *markup, pv *playgroundView, r *diagramRow) {
	m.raw(`<g class="dg-row"`)
	m.attr("data-kind", r.Kind)
	m.intAttr("data-h", r.Handler)
	m.intAttr("data-step", r.Step)
	m.flag("data-future", r.Future)
	m.flag("data-divergent", r.Divergent)
	m.raw(`>`)
	if r.Divergent {
		m.raw(`<rect class="dg-div-row" x="4"`)
		m.intAttr("y", r.Y-15)
		m.intAttr("width", pv.diagram.Width-8)
		m.raw(` height="21" rx="4" data-divergence></rect> `)
	}
	m.raw(`<text class="dg-gutter" x="10"`)
	m.intAttr("y", r.Y)
	m.raw(`>`)
	m.text(r.Name)
	m.raw(" · ")
	m.int(r.Step)
	m.raw(`</text> `)
	if r.Arrow {
		m.raw(`<line class="dg-arrow"`)
		m.intAttr("x1", r.X1)
		m.intAttr("y1", r.Y-4)
		if r.Broken {
			m.intAttr("x2", r.MarkX)
			m.intAttr("y2", r.Y-4)
		} else {
			m.intAttr("x2", r.X2)
			m.intAttr("y2", r.Y-4)
			m.attr("marker-end", pv.arrowRef)
		}
		m.raw(`></line> `)
	}
	switch r.Mark {
	case "cross":
		m.raw(`<path class="dg-cross"`)
		m.attr("d", crossPath(r.MarkX, r.Y-4))
		m.raw(`></path> `)
	case "dot":
		m.raw(`<circle class="dg-dot"`)
		m.intAttr("cx", r.MarkX)
		m.intAttr("cy", r.Y-4)
		m.raw(` r="4.5"></circle> `)
	case "ring":
		m.raw(`<circle class="dg-ring"`)
		m.intAttr("cx", r.MarkX)
		m.intAttr("cy", r.Y-4)
		m.raw(` r="4"></circle> `)
	}
	m.raw(`<text class="dg-label"`)
	m.intAttr("x", r.LabelX)
	m.intAttr("y", labelY(*r))
	m.attr("text-anchor", r.Anchor)
	m.raw(`>`)
	m.text(r.Label)
	m.raw(`</text></g>`)
}
