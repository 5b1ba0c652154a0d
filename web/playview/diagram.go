package playview

import (
	"fmt"
	"idemlab/web/playurl"
	"sort"
	"strconv"
	"strings"
	"sync"
	"sync/atomic"

	"idemlab/internal/english"
	"idemlab/playground"
)

// ----- Sequence diagram -----

// The diagram is laid out here, in pixels of the SVG's viewBox; the
// template only draws it. Time runs down: one band per event, one row per
// step of each handler's run inside it. Lanes, left to right: the broker,
// each worker, then each handler's ledger.

const (
	dgGutter     = 112 // step labels on the left
	dgLane       = 136 // the widest lane in a lesson; the full-size page spreads out
	dgLaneMin    = 76  // the narrowest: "Worker A" fits
	dgLedgerLane = 112 // a ledger's lane, for a handler's name ("check-then-insert")
	dgLaneWide   = 176
	dgFitWidth   = 664 // a lesson's diagram box (the reading measure less the playground's margins)
	dgHead       = 40
	dgBand       = 26
	dgRow        = 22
	dgPad        = 10
)

type diagramView struct {
	Width, Height int
	Lanes         []laneView
	Bands         []bandView
	Rows          []diagramRow
	Title         string
}

type laneView struct {
	X       int
	Label   string
	Sub     string
	Kind    string // broker, worker, ledger
	Handler int    // ledger lanes: handler index
}

type bandView struct {
	Y, H      int
	Event     int
	Label     string
	Current   bool
	Future    bool
	Divergent bool
}

type diagramRow struct {
	Y         int
	Step      int
	Handler   int
	Name      string // the handler's, written before the step's number in the gutter: "increment · 10"
	Kind      string
	Arrow     bool
	X1, X2    int
	Broken    bool // lost ack: the arrow stops halfway with a cross
	Label     string
	LabelX    int
	Anchor    string // start, middle, end
	Mark      string // "cross", "dot", "ring", ""
	MarkX     int
	Future    bool
	Divergent bool
}

// lessonLanes are the widths of the broker's and workers' lanes (n of
// them) and of the ledgers' (m) in a lesson's box.
func lessonLanes(n, m int) (brokerLane, ledgerLane int) {
	room := dgFitWidth - dgGutter - dgPad
	brokerLane = min(dgLane, max(dgLaneMin, (room-m*dgLedgerLane)/n))
	ledgerLane = min(dgLane, max(dgLaneMin, (room-n*brokerLane)/max(m, 1)))
	return brokerLane, ledgerLane
}

func newDiagram(pv *View) diagramView {
	tr := pv.trace
	d := diagramView{}
	// In a lesson the lanes share the box's width, so that the diagram
	// fits it whole: a ledger's lane keeps room for its handler's name,
	// the broker's and the workers' lanes take what is left. More lanes
	// than fit scroll sideways.
	brokerLane, ledgerLane := dgLaneWide, dgLaneWide
	if pv.Place.InLesson() {
		brokerLane, ledgerLane = lessonLanes(1+len(tr.Workers), len(tr.Handlers))
	}
	laneX := map[string]int{}
	x := dgGutter + brokerLane/2
	d.Lanes = append(d.Lanes, laneView{X: x, Label: "Broker", Sub: "queue", Kind: "broker"})
	laneX[""] = x
	laneX["janitor"] = x
	for _, w := range tr.Workers {
		x += brokerLane
		d.Lanes = append(d.Lanes, laneView{X: x, Label: "Worker " + w, Sub: "consumer", Kind: "worker"})
		laneX[w] = x
	}
	ledgerX := make([]int, len(tr.Handlers))
	last := brokerLane
	for i, h := range tr.Handlers {
		x += last/2 + ledgerLane/2
		last = ledgerLane
		ledgerX[i] = x
		d.Lanes = append(d.Lanes, laneView{X: x, Label: h.Name, Sub: "ledger", Kind: "ledger", Handler: i})
	}
	d.Width = x + last/2 + dgPad

	// Steps per event and handler, in order.
	y := dgHead
	cursors := make([]int, len(tr.Handlers))
	for _, ev := range tr.Events {
		band := bandView{Y: y, Event: ev.Index, Label: strconv.Itoa(ev.Index) + " · " + ev.Text,
			Current: ev.Index == pv.at, Future: ev.Index > pv.at, Divergent: pv.div != nil && pv.div.Event == ev.Index}
		y += dgBand
		for hi, h := range tr.Handlers {
			for cursors[hi] < len(h.Steps) && h.Steps[cursors[hi]].Event == ev.Index {
				st := h.Steps[cursors[hi]]
				cursors[hi]++
				row := diagramRow{Y: y + dgRow/2 + 4, Step: st.Index, Handler: hi, Kind: st.Kind,
					Name: h.Name, Future: band.Future,
					Divergent: h.FirstDivergence != nil && h.FirstDivergence.Step == st.Index && !band.Future}
				layoutRow(&row, st, laneX, ledgerX[hi])
				d.Rows = append(d.Rows, row)
				y += dgRow
			}
		}
		band.H = y - band.Y + 4
		y += 4
		d.Bands = append(d.Bands, band)
	}
	d.Height = y + dgPad
	d.Title = fmt.Sprintf("Sequence diagram of %d events: the broker, %d workers and %d ledgers. The step list below says the same in words.",
		len(tr.Events), len(tr.Workers), len(tr.Handlers))
	return d
}

// layoutRow places one step: an arrow between two lanes with a label, or
// a mark on one lane.
func layoutRow(r *diagramRow, st playground.Step, laneX map[string]int, ledger int) {
	broker := laneX[""]
	w, ok := laneX[st.Worker]
	if !ok {
		w = broker
	}
	arrow := func(from, to int, label string) {
		r.Arrow, r.X1, r.X2, r.Label, r.Anchor = true, from, to, label, "middle"
		r.LabelX = (from + to) / 2
	}
	mark := func(at int, m, label string) {
		r.Mark, r.MarkX, r.Label, r.LabelX, r.Anchor = m, at, label, at+9, "start"
	}
	switch st.Kind {
	case playground.StepDeliver:
		label := st.Message
		if st.Copy > 1 {
			label += " copy " + strconv.Itoa(st.Copy)
		}
		if st.Attempt > 1 {
			label += " #" + strconv.Itoa(st.Attempt)
		}
		arrow(broker, w, label)
	case playground.StepSQL:
		label := sqlLabel(st.SQL)
		switch {
		case st.RowsAffected != nil:
			label += " → " + strconv.FormatInt(*st.RowsAffected, 10)
		case st.RowsFound != nil:
			label += " → " + strconv.FormatInt(*st.RowsFound, 10) + " found"
		case st.SQLState != "": // PostgreSQL's error code; SQLite's errors say it in the step list
			label += " → " + st.SQLState
		}
		arrow(w, ledger, label)
		if st.Effect {
			r.Mark, r.MarkX = "dot", ledger
		}
	case playground.StepBlocked:
		if st.Error == "" { // PostgreSQL: it waits on a lock, no error
			arrow(w, ledger, sqlLabel(st.SQL)+" → waits")
		} else {
			arrow(w, ledger, sqlLabel(st.SQL)+" → BUSY")
		}
		r.Mark, r.MarkX = "ring", ledger
	case playground.StepAck:
		arrow(w, broker, "ack")
	case playground.StepAckLost:
		arrow(w, broker, "ack lost")
		r.Broken = true
		r.Mark, r.MarkX = "cross", (w+broker)/2
	case playground.StepAckRefused:
		arrow(w, broker, "ack refused")
		r.Mark, r.MarkX = "cross", broker
	case playground.StepCrash:
		mark(w, "cross", "crash")
	case playground.StepRollback:
		arrow(w, ledger, "rollback")
	case playground.StepRestart:
		mark(w, "ring", "restart: filter emptied")
	case playground.StepAbort:
		why := st.Error
		if why == "" {
			why = st.Note
		}
		mark(w, "cross", "abort: "+english.Truncate(why, 40))
	case playground.StepStop:
		mark(w, "ring", "stop: already handled")
	case playground.StepFilterHit:
		mark(w, "ring", "filter: seen before")
	case playground.StepLeaseExpired:
		mark(broker, "ring", "lease of "+st.Message+" expired")
	case playground.StepDeadLetter:
		mark(broker, "cross", st.Message+" dead-lettered")
	case playground.StepPrune:
		arrow(broker, ledger, "prune dedupe rows")
	case playground.StepClock:
		mark(broker, "ring", "clock → "+strconv.FormatInt(st.Tick, 10))
	case playground.StepSkip:
		mark(w, "ring", "skipped: "+english.Truncate(st.Note, 48))
	case playground.StepProvider, playground.StepEmail:
		if st.Error != "" { // refused: nothing happened outside
			mark(w, "cross", st.Kind+": "+english.Truncate(st.Error, 56))
			break
		}
		mark(w, "dot", st.Kind+": "+english.Truncate(st.Note, 56))
	case playground.StepBackoff:
		mark(broker, "ring", st.Message+" held back: "+backoffLabel(st.Note))
	default:
		mark(w, "ring", st.Kind)
	}
}

// backoffLabel is the delay part of a backoff step's note: "for 10
// seconds, until tick 15", or "none" when the copy is handed straight back.
func backoffLabel(note string) string {
	_, rest, ok := strings.Cut(note, " back for ")
	if !ok {
		return "none"
	}
	rest, _, _ = strings.Cut(rest, " (")
	return rest
}

// sqlLabel shortens a statement to its verb and table: "UPDATE accounts".
// A handler's statements are the same on every click, so the labels are
// remembered, up to sqlLabelsKept of them (a learner's handler brings new
// ones).
func sqlLabel(sql string) string {
	if l, ok := sqlLabels.Load(sql); ok {
		return l.(string)
	}
	l := shortSQL(sql)
	if sqlLabelsCount.Add(1) <= sqlLabelsKept {
		sqlLabels.Store(sql, l)
	}
	return l
}

const sqlLabelsKept = 4096

var (
	sqlLabels      sync.Map // statement → label
	sqlLabelsCount atomic.Int64
)

func shortSQL(sql string) string {
	f := strings.Fields(sql)
	if len(f) == 0 {
		return "SQL"
	}
	verb := strings.ToUpper(f[0])
	for i := 0; i+1 < len(f); i++ {
		switch strings.ToUpper(f[i]) {
		case "INTO", "FROM":
			return verb + " " + trimTable(f[i+1])
		case "UPDATE":
			if i == 0 {
				return verb + " " + trimTable(f[i+1])
			}
		}
	}
	return verb
}

func trimTable(s string) string {
	if i := strings.IndexAny(s, "(;"); i >= 0 {
		s = s[:i]
	}
	return s
}

// ----- Chart: expected against actual, after each event -----

const (
	chWidth  = 280
	chHeight = 104
	chLeft   = 40
	chRight  = 10
	chTop    = 10
	chBottom = 22
)

type chartView struct {
	Width, Height     int
	Expected, Actual  []int64 // per event, index 0 = before any event
	ExpectedPts       string
	ActualPts         string
	Dots              []chartDot
	YTicks            [2]chartTick // the top and the bottom
	XTicks            []chartTick
	CursorX, CursorW  int // the column of the event shown
	DivX              int // -1 when no divergence shown
	Left, Right, Base int
	Top               int
	Label             string // figure label; with the values, the drawing's words for screen readers
	min, max          int64
}

type chartDot struct {
	X, Y    int
	Differs bool
}

type chartTick struct {
	Pos   int
	Value int64 // its label
}

func newChart(h *playground.HandlerTrace, sc *playground.Scenario, at, kf int) chartView {
	c := chartView{Width: chWidth, Height: chHeight, DivX: -1}
	init := sc.InitialFigures()
	if kf < len(init) {
		c.Label = figureLabel(init[kf])
		c.Expected = append(make([]int64, 0, len(h.Frames)+1), init[kf].Value)
		c.Actual = append(make([]int64, 0, len(h.Frames)+1), init[kf].Value)
	}
	for _, f := range h.Frames {
		if kf < len(f.Expected) && kf < len(f.Actual) {
			c.Expected = append(c.Expected, f.Expected[kf].Value)
			c.Actual = append(c.Actual, f.Actual[kf].Value)
		}
	}
	c.min, c.max = minMax(c.Expected, c.Actual)
	if d := h.FirstDivergence; d != nil && d.Event > 0 && d.Event <= at {
		c.DivX = d.Event // converted to pixels in scaleCharts
	}
	c.CursorX = at
	return c
}

func minMax(lists ...[]int64) (int64, int64) {
	first := true
	var lo, hi int64
	for _, l := range lists {
		for _, v := range l {
			if first || v < lo {
				lo = v
			}
			if first || v > hi {
				hi = v
			}
			first = false
		}
	}
	return lo, hi
}

// scaleCharts gives every handler's chart the same scale, so that the
// lines compare at a glance, and computes the points.
func scaleCharts(hs []*handlerView) {
	var lo, hi int64
	for i, h := range hs {
		if i == 0 || h.Chart.min < lo {
			lo = h.Chart.min
		}
		if i == 0 || h.Chart.max > hi {
			hi = h.Chart.max
		}
	}
	if lo > 0 { // an honest axis: bars and steps read against 0
		lo = 0
	}
	if hi == lo {
		hi = lo + 1
	}
	for _, h := range hs {
		c := &h.Chart
		n := len(c.Expected)
		plotW := c.Width - chLeft - chRight
		plotH := c.Height - chTop - chBottom
		c.Left, c.Right, c.Top, c.Base = chLeft, c.Width-chRight, chTop, c.Height-chBottom
		// Value i (after event i) holds over the column [xAt(i), xAt(i+1)].
		xAt := func(i int) int { return chLeft + i*plotW/max(n, 1) }
		yAt := func(v int64) int { return chTop + int(float64(hi-v)/float64(hi-lo)*float64(plotH)) }
		c.ExpectedPts = stepPoints(c.Expected, xAt, yAt)
		c.ActualPts = stepPoints(c.Actual, xAt, yAt)
		c.Dots = make([]chartDot, 0, len(c.Actual))
		for i := range c.Actual {
			c.Dots = append(c.Dots, chartDot{X: (xAt(i) + xAt(i+1)) / 2, Y: yAt(c.Actual[i]), Differs: c.Actual[i] != c.Expected[i]})
		}
		c.YTicks = [2]chartTick{{yAt(hi), hi}, {yAt(lo), lo}}
		step := max(1, (n+7)/8)
		c.XTicks = make([]chartTick, 0, (n+step-1)/step)
		for i := 0; i < n; i += step {
			c.XTicks = append(c.XTicks, chartTick{(xAt(i) + xAt(i+1)) / 2, int64(i)})
		}
		if c.DivX >= 0 {
			c.DivX = xAt(c.DivX)
		}
		cur := min(c.CursorX, max(n-1, 0))
		c.CursorX, c.CursorW = xAt(cur), xAt(cur+1)-xAt(cur)
	}
}

// stepPoints draws values as steps: value i holds over its column.
func stepPoints(vals []int64, xAt func(int) int, yAt func(int64) int) string {
	b := make([]byte, 0, len(vals)*16)
	for i, v := range vals {
		if i > 0 {
			b = append(b, ' ')
		}
		y := int64(yAt(v))
		b = strconv.AppendInt(b, int64(xAt(i)), 10)
		b = append(b, ',')
		b = strconv.AppendInt(b, y, 10)
		b = append(b, ' ')
		b = strconv.AppendInt(b, int64(xAt(i+1)), 10)
		b = append(b, ',')
		b = strconv.AppendInt(b, y, 10)
	}
	return string(b)
}

// ----- Step list: the diagram in words -----

type stepGroup struct {
	Event     int
	Text      string
	Tick      int64
	Current   bool
	Future    bool
	Divergent bool
	Handlers  []stepHandlerGroup
}

type stepHandlerGroup struct {
	Name  string
	Steps []stepView
}

type stepView struct {
	step      *playground.Step // in the trace the view shows
	Args      string           // "amount = 50, account_id = acc-1"
	Changes   []string
	Divergent bool
}

func newStepGroups(pv *View) []stepGroup {
	tr := pv.trace
	sql := pv.state.Panels.Has(playurl.PanelSQL) // closed, a step's SQL, values and rows are not drawn
	out := make([]stepGroup, 0, len(tr.Events))
	for _, ev := range tr.Events {
		g := stepGroup{Event: ev.Index, Text: ev.Text, Tick: ev.Tick, Current: ev.Index == pv.at, Future: ev.Index > pv.at,
			Divergent: pv.div != nil && pv.div.Event == ev.Index, Handlers: make([]stepHandlerGroup, 0, len(tr.Handlers))}
		for _, h := range tr.Handlers {
			hg := stepHandlerGroup{Name: h.Name}
			if ev.Index <= len(h.Frames) {
				f := h.Frames[ev.Index-1]
				g.Tick = f.Tick
				hg.Steps = make([]stepView, 0, f.StepCount)
				for i := f.FirstStep; i > 0 && i < f.FirstStep+f.StepCount && i <= len(h.Steps); i++ {
					st := &h.Steps[i-1]
					hg.Steps = append(hg.Steps, newStepView(st, h.FirstDivergence != nil && h.FirstDivergence.Step == st.Index && !g.Future, sql))
				}
			}
			g.Handlers = append(g.Handlers, hg)
		}
		out = append(out, g)
	}
	return out
}

// newStepView is a step of the step list; its bound values and changed
// rows only when sql (the SQL panel is open, the one place they show). Its
// words are written when it is drawn (drawStepText).
func newStepView(st *playground.Step, divergent, sql bool) stepView {
	sv := stepView{step: st, Divergent: divergent}
	if !sql {
		return sv
	}
	var args []string
	for _, a := range st.Args {
		args = append(args, a.Name+" = "+cellText(a.Value))
	}
	sv.Args = strings.Join(args, ", ")
	for _, c := range append(append([]playground.Change(nil), st.Changes...), st.Reverted...) {
		sv.Changes = append(sv.Changes, changeText(c))
	}
	return sv
}

func changeText(c playground.Change) string {
	state := "committed"
	switch {
	case c.Pending:
		state = "pending, inside the transaction"
	case !c.Committed:
		state = "undone"
	}
	return c.Op + " " + c.Table + "/" + c.Key + ": " + rowText(c.Before) + " → " + rowText(c.After) + " (" + state + ")"
}

func rowText(m map[string]any) string {
	if m == nil {
		return "∅"
	}
	keys := make([]string, 0, len(m))
	for k := range m {
		keys = append(keys, k)
	}
	sort.Strings(keys)
	parts := make([]string, len(keys))
	for i, k := range keys {
		parts[i] = k + "=" + cellText(m[k])
	}
	return "{" + strings.Join(parts, ", ") + "}"
}
