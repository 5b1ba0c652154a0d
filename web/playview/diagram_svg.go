package playview

// drawDiagram draws the sequence diagram panel. It fits a lesson's width (the
// lanes are spaced to it); when a run has more lanes than fit, or more
// rows than its box, it scrolls with the lane names kept in view, and it
// always opens at its top.
//
// It is drawn with markup rather than a template: every row of it is a
// dozen numeric attributes, drawn on every click (markup.go says why).
func drawDiagram(m *Markup, pv *View) {
	d := &pv.diagram
	m.Raw(`<section class="pg-diagram" id="`)
	m.Text(pv.id)
	m.Raw(`-diagram"`)
	m.Attr("aria-label", pv.regionLabel("Sequence diagram"))
	m.Raw(` data-testid="pg-diagram-panel"><h3 class="pg-section-title" id="`)
	m.Text(pv.id)
	m.Raw(`-dg-title">Sequence diagram</h3><div class="pg-scroll" tabindex="0" aria-label="Sequence diagram, scrollable" data-testid="pg-diagram-scroll">`)
	// The lane names stay in view while the diagram scrolls.
	m.Raw(`<svg class="pg-dg pg-dg-lanes" viewBox="0 0 `)
	m.int(d.Width)
	m.Raw(" ")
	m.int(dgHead)
	m.Raw(`"`)
	m.IntAttr("width", d.Width)
	m.IntAttr("height", dgHead)
	m.Raw(` aria-hidden="true" data-testid="pg-diagram-lanes">`)
	for _, l := range d.Lanes {
		drawLaneGroup(m, l)
		m.Raw(`><text class="dg-lane-label"`)
		m.IntAttr("x", l.X)
		m.Raw(` y="15" text-anchor="middle">`)
		m.Text(l.Label)
		m.Raw(`</text> <text class="dg-lane-sub"`)
		m.IntAttr("x", l.X)
		m.Raw(` y="31" text-anchor="middle">`)
		m.Text(l.Sub)
		m.Raw(`</text></g>`)
	}
	m.Raw(`</svg> <svg class="pg-dg" viewBox="0 `)
	m.int(dgHead)
	m.Raw(" ")
	m.int(d.Width)
	m.Raw(" ")
	m.int(d.Height - dgHead)
	m.Raw(`"`)
	m.IntAttr("width", d.Width)
	m.IntAttr("height", d.Height-dgHead)
	m.Raw(` role="img"`)
	m.Attr("aria-label", d.Title)
	m.Raw(` data-testid="pg-diagram"><defs><marker id="`)
	m.Text(pv.id)
	m.Raw(`-arrow" viewBox="0 0 10 10" refX="9" refY="5" markerWidth="7" markerHeight="7" orient="auto-start-reverse"><path d="M0,0 L10,5 L0,10 z" class="dg-head"></path></marker></defs> `)
	for _, b := range d.Bands {
		m.Raw(`<g class="dg-band"`)
		m.IntAttr("data-event", b.Event)
		m.Flag("data-current", b.Current)
		m.Flag("data-future", b.Future)
		m.Flag("data-divergent", b.Divergent)
		m.Raw(`><rect x="2"`)
		m.IntAttr("y", b.Y)
		m.IntAttr("width", d.Width-4)
		m.IntAttr("height", b.H)
		m.Raw(` rx="6"></rect> <text class="dg-band-label" x="10"`)
		m.IntAttr("y", b.Y+17)
		m.Raw(`>`)
		m.Text(b.Label)
		m.Raw(`</text> `)
		if b.Divergent {
			m.Raw(`<text class="dg-div-label"`)
			m.IntAttr("x", d.Width-12)
			m.IntAttr("y", b.Y+17)
			m.Raw(` text-anchor="end" data-divergence>⚑ first divergence</text>`)
		}
		m.Raw(`</g> `)
	}
	for _, l := range d.Lanes {
		drawLaneGroup(m, l)
		m.Raw(`><line`)
		m.IntAttr("x1", l.X)
		m.IntAttr("y1", dgHead)
		m.IntAttr("x2", l.X)
		m.IntAttr("y2", d.Height-6)
		m.Raw(`></line></g> `)
	}
	for i := range d.Rows {
		drawDiagramRow(m, pv, &d.Rows[i])
	}
	m.Raw(`</svg></div><p class="pg-legend pg-muted" aria-hidden="true"><span class="lg-dot">effect committed</span> <span class="lg-cross">crash / lost / refused</span> <span class="lg-ring">note</span></p></section>`)
}

// drawLaneGroup opens a lane's <g>, without its closing ">".
func drawLaneGroup(m *Markup, l laneView) {
	m.Raw(`<g class="dg-lane"`)
	m.Attr("data-kind", l.Kind)
	if l.Kind == "ledger" {
		m.IntAttr("data-h", l.Handler)
	}
}

func drawDiagramRow(m *Markup, pv *View, r *diagramRow) {
	m.Raw(`<g class="dg-row"`)
	m.Attr("data-kind", r.Kind)
	m.IntAttr("data-h", r.Handler)
	m.IntAttr("data-step", r.Step)
	m.Flag("data-future", r.Future)
	m.Flag("data-divergent", r.Divergent)
	m.Raw(`>`)
	if r.Divergent {
		m.Raw(`<rect class="dg-div-row" x="4"`)
		m.IntAttr("y", r.Y-15)
		m.IntAttr("width", pv.diagram.Width-8)
		m.Raw(` height="21" rx="4" data-divergence></rect> `)
	}
	m.Raw(`<text class="dg-gutter" x="10"`)
	m.IntAttr("y", r.Y)
	m.Raw(`>`)
	m.Text(r.Name)
	m.Raw(" · ")
	m.int(r.Step)
	m.Raw(`</text> `)
	if r.Arrow {
		m.Raw(`<line class="dg-arrow"`)
		m.IntAttr("x1", r.X1)
		m.IntAttr("y1", r.Y-4)
		if r.Broken {
			m.IntAttr("x2", r.MarkX)
			m.IntAttr("y2", r.Y-4)
		} else {
			m.IntAttr("x2", r.X2)
			m.IntAttr("y2", r.Y-4)
			m.Attr("marker-end", pv.arrowRef)
		}
		m.Raw(`></line> `)
	}
	switch r.Mark {
	case "cross":
		m.Raw(`<path class="dg-cross"`)
		m.Attr("d", crossPath(r.MarkX, r.Y-4))
		m.Raw(`></path> `)
	case "dot":
		m.Raw(`<circle class="dg-dot"`)
		m.IntAttr("cx", r.MarkX)
		m.IntAttr("cy", r.Y-4)
		m.Raw(` r="4.5"></circle> `)
	case "ring":
		m.Raw(`<circle class="dg-ring"`)
		m.IntAttr("cx", r.MarkX)
		m.IntAttr("cy", r.Y-4)
		m.Raw(` r="4"></circle> `)
	}
	m.Raw(`<text class="dg-label"`)
	m.IntAttr("x", r.LabelX)
	m.IntAttr("y", labelY(*r))
	m.Attr("text-anchor", r.Anchor)
	m.Raw(`>`)
	m.Text(r.Label)
	m.Raw(`</text></g>`)
}
