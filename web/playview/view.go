package playview

import (
	"fmt"
	"idemlab/web/playurl"
	"idemlab/web/site"
	"slices"
	"strconv"
	"strings"

	"idemlab/internal/english"
	"idemlab/lessons"
	"idemlab/playground"
)

// playgroundView is everything the playground component draws, computed
// from one trace at one event cursor. The templates only lay it out.
type View struct {
	id       string // element id: the lesson block's id, or "playground"
	Place    playurl.Place
	state    playurl.State
	self     string // this state's href (site path, base included)
	fullSize string // the same state in the full-size playground ("" there)
	trace    *playground.Trace
	scenario *playground.Scenario
	spec     *lessons.PlaygroundSpec

	at, total int
	events    []eventView
	handlers  []*handlerView
	messages  []messageView
	workers   []workerView
	controls  controlsView
	diagram   diagramView
	steps     []stepGroup // the step list: the diagram's text equivalent
	div       *divergenceView
	announce  string // the verdicts in one sentence, for the live region
	// hiddenVerdicts is announce while a question hides the verdicts: what
	// Skip reads out (data-verdicts).
	hiddenVerdicts string
	keyFigure      string        // "acc-1 balance", "ord-1 shipments"
	problem        *inputProblem // the learner's input that was rejected, shown in place
	oembed         string        // the oEmbed answer for this state: the Embed button's source
	tickUnit       string
	clock          int64
	refusal        *refusalView  // the run was stopped at its budget (run.go)
	goals          []goalView    // the lesson block's goals at this state (goals.go)
	predict        *predictView  // the lesson block's question, asked or answered (goals.go)
	toggles        []panelToggle // the views bar: rows, chart, diagram, steps
	sqlToggle      panelToggle   // inside the step list
	arrowRef       string        // the diagram's arrowhead marker, url(#…)
	back           *exerciseBack // the exercise a replay came from (goals.go)

	ledgers []actionLink // the ledger switch (postgresledger.go); nil without PostgreSQL ledgers
	// recorded: a PostgreSQL block's recorded run on a server without
	// PostgreSQL (recorded.go); nil for a live run.
	recorded *recordedView
	more     []moreToggle // the control panels, open or closed (more.go)
}

// panelToggle opens or closes a panel: a link to this state with the
// panel's bit flipped (pgState.toggled).
type panelToggle struct {
	Name   string // as in show=…: rows, chart, diagram, steps, sql
	Label  string
	Title  string
	Href   string
	Open   bool
	TestID string
}

// panelToggles word each panel's toggle.
var panelToggles = map[playurl.Panels]panelToggle{
	playurl.PanelRows:    {Label: "Rows", Title: "Each ledger's rows, and how its handler works", TestID: "pg-show-rows"},
	playurl.PanelChart:   {Label: "Chart", Title: "Each ledger's key figure after every event", TestID: "pg-show-chart"},
	playurl.PanelDiagram: {Label: "Sequence diagram", Title: "Every delivery, statement and ack, lane by lane", TestID: "pg-show-diagram"},
	playurl.PanelSteps:   {Label: "Step by step", Title: "Every statement of every handler, in order", TestID: "pg-show-steps"},
	playurl.PanelSQL:     {Label: "With SQL", Title: "The SQL of every statement, its bound values and the rows it changed", TestID: "pg-show-sql"},
}

func newPanelToggle(v *site.View, pv *View, pn playurl.PanelName) panelToggle {
	t := panelToggles[pn.Bit]
	t.Name = pn.Name
	t.Href = v.Path(pv.Place.Href(pv.state.Toggled(pn.Bit)))
	t.Open = pv.state.Panels.Has(pn.Bit)
	return t
}

type eventView struct {
	Index     int
	Text      string
	Href      string
	Current   bool // the cursor is on it
	Future    bool // after the cursor: dimmed
	Divergent bool // the first divergent event
}

type divergenceView struct {
	Event   int
	Text    string // "event 3 · redeliver msg-1"
	Handler string
	Step    int
	Detail  string
}

type handlerView struct {
	Index       int
	Name        string
	Description string
	Idempotent  bool
	Why         string
	Verdict     string // at the cursor: ok, duplicate-effect, lost-effect
	Label       string // "Correct", "Duplicate effect", "Lost effect"
	Sentence    string // "credited twice: msg-1 applied at events 1 and 2"
	Expect      string // the lesson's expected verdict, if any
	Figures     []figureView
	Tables      []tableView
	Chart       chartView
	Divergence  *playground.Divergence // when it happened at or before the cursor
}

type figureView struct {
	Label    string // "acc-1"
	Expected string
	Actual   string
	Differs  bool
}

type tableView struct {
	Name    string
	Columns []string
	Rows    []rowView
}

type rowView struct {
	Cells   []string
	Changed bool
}

// ----- Building -----

// newPlaygroundView computes the view of a trace at the state's cursor.
func NewView(v *site.View, place playurl.Place, state playurl.State, tr *playground.Trace, sc *playground.Scenario) *View {
	place.Links = playurl.NewLinkCache(state)
	pv := &View{
		id: "playground", Place: place, state: state, trace: tr, scenario: sc, spec: place.Spec,
		total: len(tr.Events), tickUnit: tr.TickUnit,
	}
	if place.Block != "" {
		pv.id = place.Block
	}
	pv.at = state.Cursor(pv.total)
	pv.ledgers = ledgerSwitch(v, place, state)
	pv.self = v.Path(place.Href(state))
	pv.oembed = v.OEmbedHref(site.PageMeta{Canonical: place.Href(state)})
	if place.Kind != playurl.PlacePage {
		pv.fullSize = v.Path(playurl.FullSizeHref(state))
	}
	if pv.at > 0 && len(tr.Handlers) > 0 {
		pv.clock = tr.Handlers[0].Frames[pv.at-1].Tick
	}
	pv.keyFigure = keyFigureIndexLabel(tr, sc)

	// The first divergence shown is the earliest at or before the cursor.
	for _, h := range tr.Handlers {
		if d := h.FirstDivergence; d != nil && d.Event > 0 && d.Event <= pv.at {
			if pv.div == nil || d.Event < pv.div.Event || d.Event == pv.div.Event && d.Step < pv.div.Step {
				pv.div = &divergenceView{Event: d.Event, Text: "event " + strconv.Itoa(d.Event) + " · " + d.EventText, Handler: h.Name, Step: d.Step, Detail: d.Detail}
			}
		}
	}
	for i, ev := range tr.Events {
		pv.events = append(pv.events, eventView{
			Index: ev.Index, Text: ev.Text,
			Href:      v.Path(place.Href(state.WithAt(ev.Index, pv.total))),
			Current:   ev.Index == pv.at,
			Future:    ev.Index > pv.at,
			Divergent: pv.div != nil && pv.div.Event == i+1,
		})
	}
	kf := keyFigureIndex(tr)
	// The lesson's expectation is about the end of its own script: once
	// the learner runs something else (or looks at an earlier event), the
	// chip would contradict the verdict beside it, so it goes.
	expectFrom := place.Spec
	if !state.SameRun(place.Home) || pv.at < pv.total {
		expectFrom = nil
	}
	for i, h := range tr.Handlers {
		pv.handlers = append(pv.handlers, newHandlerView(i, h, tr, sc, pv.at, kf, expectFrom, state.Panels))
	}
	if state.Panels.Has(playurl.PanelChart) {
		scaleCharts(pv.handlers)
	}
	var parts []string
	for _, h := range pv.handlers {
		parts = append(parts, h.Name+": "+h.Label+", "+h.Sentence)
	}
	pv.goals, pv.predict, pv.back = newGoalViews(v, pv), newPredictView(v, pv), newExerciseBack(v, pv)
	pv.announce = strings.Join(parts, ". ") + "." + goalsAnnouncement(pv.goals)
	if pv.predict != nil && pv.predict.Hiding {
		// The verdicts wait for the answer (or Skip, which reads them out).
		pv.hiddenVerdicts = pv.announce
		pv.announce = "Answer the question above the controls, or skip it, to see the verdicts." + goalsAnnouncement(pv.goals)
	}
	pv.messages, pv.workers = brokerStatus(tr, sc, pv.at)
	pv.more = newMoreToggles(v, pv)
	pv.controls = newControls(v, pv)
	for _, pn := range playurl.PanelNames {
		if pn.Bit == playurl.PanelSQL {
			pv.sqlToggle = newPanelToggle(v, pv, pn)
		} else {
			pv.toggles = append(pv.toggles, newPanelToggle(v, pv, pn))
		}
	}
	// Only what is shown is laid out.
	if state.Panels.Has(playurl.PanelDiagram) {
		pv.diagram = newDiagram(pv)
		pv.arrowRef = "url(#" + pv.id + "-arrow)"
	}
	if state.Panels.Has(playurl.PanelSteps) {
		pv.steps = newStepGroups(pv)
	}
	return pv
}

var verdictLabels = map[string]string{
	playground.VerdictOK:           "Correct",
	playground.VerdictDuplicate:    "Duplicate effect",
	playground.VerdictLost:         "Lost effect",
	playground.VerdictUnexpected:   "Shipped an unpaid order",
	playground.VerdictPending:      "Not finished yet",
	playground.VerdictDeadLettered: "Gave up: dead-lettered",
}

func newHandlerView(i int, h *playground.HandlerTrace, tr *playground.Trace, sc *playground.Scenario, at, kf int, spec *lessons.PlaygroundSpec, panels playurl.Panels) *handlerView {
	hv := &handlerView{Index: i, Name: h.Name, Description: h.Description, Idempotent: h.Idempotent, Why: h.Why}
	if spec != nil {
		hv.Expect = spec.Expect[h.Name]
	}
	expected, actual := h.FiguresAt(sc, at)
	if d := h.FirstDivergence; d != nil && d.Event > 0 && d.Event <= at {
		hv.Divergence = d
	}

	hv.Verdict = h.VerdictAt(at)
	hv.Label = verdictLabels[hv.Verdict]
	if hv.Verdict == playground.VerdictPending || hv.Verdict == playground.VerdictDeadLettered {
		var why []string
		for _, m := range h.UnsettledAt(at) {
			why = append(why, m.Detail)
		}
		hv.Sentence = strings.Join(why, "; ")
		if hv.Verdict == playground.VerdictPending {
			hv.Sentence = "no verdict yet, the broker still owes a delivery: " + hv.Sentence + "; deliver or finish it to see where it lands"
		} else {
			hv.Sentence += ": the broker stopped retrying, and someone has to look at the dead-letter queue"
		}
	} else {
		hv.Sentence = verdictSentence(hv.Verdict, h, sc, at, expected, actual)
	}

	for j := range expected {
		fv := figureView{Label: figureLabel(expected[j]), Expected: figureValue(expected[j])}
		if j < len(actual) {
			fv.Actual = figureValue(actual[j])
			fv.Differs = expected[j] != actual[j]
		}
		hv.Figures = append(hv.Figures, fv)
	}
	if panels.Has(playurl.PanelChart) {
		hv.Chart = newChart(h, sc, at, kf)
	}
	if !panels.Has(playurl.PanelRows) {
		return hv
	}
	var ledger []playground.TableRows
	var changed []string
	if at > 0 {
		f := h.Frames[at-1]
		ledger, changed = f.Ledger, f.Changed
	} else {
		ledger = sc.InitialLedger()
	}
	for _, t := range ledger {
		if !tableShown(t, sc) {
			continue
		}
		tv := tableView{Name: t.Table, Columns: t.Columns, Rows: make([]rowView, 0, len(t.Rows))}
		for _, r := range t.Rows {
			rv := rowView{Changed: slices.Contains(changed, t.Table+"/"+r.Key), Cells: make([]string, len(r.Values))}
			for i, val := range r.Values {
				rv.Cells[i] = cellText(val)
			}
			tv.Rows = append(tv.Rows, rv)
		}
		hv.Tables = append(hv.Tables, tv)
	}
	return hv
}

// tableShown hides the tables a scenario never uses (orders in a story of
// accounts) unless rows appeared in them.
func tableShown(t playground.TableRows, sc *playground.Scenario) bool {
	return len(t.Rows) > 0 || slices.Contains(sc.Tables(), t.Table)
}

func cellText(v any) string {
	switch v := v.(type) {
	case nil:
		return "NULL"
	case float64:
		return strconv.FormatFloat(v, 'f', -1, 64)
	case string:
		return v
	case int64:
		return strconv.FormatInt(v, 10)
	default:
		return fmt.Sprint(v)
	}
}

func figureLabel(f playground.Figure) string {
	switch f.Table {
	case "orders":
		return f.Key + " shipments"
	case playground.ChargesTable:
		return f.Key + " charged at the provider"
	case playground.EmailsTable:
		return f.Key + " receipts emailed"
	}
	if f.Table == "prices" {
		return f.Key + " price"
	}
	return f.Key + " balance"
}

func figureValue(f playground.Figure) string {
	if f.Table == "orders" {
		return fmt.Sprintf("%s, %s", f.State, english.Plural(int(f.Value), "parcel", "parcels"))
	}
	return strconv.FormatInt(f.Value, 10)
}

// verdictSentence says in words what went wrong, per message.
func verdictSentence(verdict string, h *playground.HandlerTrace, sc *playground.Scenario, at int, expected, actual []playground.Figure) string {
	if verdict == playground.VerdictOK {
		if at == 0 {
			return "nothing has happened yet"
		}
		return "every message took effect exactly once"
	}
	// The engine groups the effects by business key (a payment carried by
	// several messages is one effect); this only words them.
	var parts []string
	for _, e := range h.Effects(sc, at) {
		switch {
		case e.Kind == playground.KindPrice:
			continue // an absolute price written twice is no second effect; the violations tell a stale write
		case len(e.Carriers) > 1:
			parts = append(parts, fmt.Sprintf("credited payment %s %s: %s applied it at %s", e.Key, timesText(len(e.Steps)), strings.Join(e.Carriers, " and "), eventsText(h, e.Steps)))
		case len(e.Steps) >= 2:
			verb := "credited"
			if e.Kind == playground.KindShip {
				verb = "shipped"
			}
			parts = append(parts, fmt.Sprintf("%s %s: %s applied at %s", verb, timesText(len(e.Steps)), e.Carriers[0], eventsText(h, e.Steps)))
		}
	}
	for _, vi := range h.Violations {
		if vi.Kind == playground.VerdictLost && vi.Event <= at && vi.MessageID != "" {
			parts = append(parts, "lost the effect of "+vi.MessageID+" ("+vi.Detail+")")
		}
		if vi.Kind == playground.VerdictDuplicate && vi.Effect != "" && vi.Event <= at {
			parts = append(parts, vi.Detail) // outside the database: the engine's own words
		}
	}
	if len(parts) == 0 {
		for j := range expected {
			if j < len(actual) && expected[j] != actual[j] {
				parts = append(parts, fmt.Sprintf("%s is %s, expected %s", figureLabel(expected[j]), figureValue(actual[j]), figureValue(expected[j])))
			}
		}
	}
	return strings.Join(parts, "; ")
}

func timesText(n int) string {
	switch n {
	case 2:
		return "twice"
	case 3:
		return "three times"
	}
	return strconv.Itoa(n) + " times"
}

// eventsText names the script's events (the timeline's numbers) in which
// the engine's steps happened: "events 1 and 2", "event 3".
func eventsText(h *playground.HandlerTrace, steps []int) string {
	var events []int
	for _, st := range steps {
		if st < 1 || st > len(h.Steps) {
			continue
		}
		if ev := h.Steps[st-1].Event; len(events) == 0 || events[len(events)-1] != ev {
			events = append(events, ev)
		}
	}
	if len(events) == 1 {
		return "event " + andList(events)
	}
	return "events " + andList(events)
}

func andList(ns []int) string {
	s := make([]string, len(ns))
	for i, n := range ns {
		s[i] = strconv.Itoa(n)
	}
	if len(s) == 1 {
		return s[0]
	}
	return strings.Join(s[:len(s)-1], ", ") + " and " + s[len(s)-1]
}

// keyFigureIndex picks the figure the chart follows: the first that ends
// up wrong for some handler, else the first.
func keyFigureIndex(tr *playground.Trace) int {
	for _, h := range tr.Handlers {
		for j := range h.Expected {
			if j < len(h.Actual) && h.Expected[j] != h.Actual[j] {
				return j
			}
		}
	}
	return 0
}

func keyFigureIndexLabel(tr *playground.Trace, sc *playground.Scenario) string {
	fs := sc.InitialFigures()
	if k := keyFigureIndex(tr); k < len(fs) {
		return figureLabel(fs[k])
	}
	return ""
}

// ----- Broker status at the cursor -----

type messageView struct {
	ID      string
	What    string // "credit 50 to acc-1"
	Status  string // "not delivered yet", "acked", …
	Control messageControls
}

type workerView struct {
	Name    string
	Status  string // "idle", "running msg-1"
	Busy    bool
	Control workerControls
}

// messageStatus words a message's standing with the broker.
var messageStatus = map[string]string{
	"":                          "not delivered yet",
	playground.StepAck:          "acked: the broker forgot it",
	playground.StepAckLost:      "ack lost: comes back when its lease ends",
	playground.StepAckRefused:   "late ack refused",
	playground.StepCrash:        "unacked: its worker crashed",
	playground.StepLeaseExpired: "lease expired: may be delivered again",
	playground.StepDeadLetter:   "dead-lettered",
	playground.StepBackoff:      "failed: held back until its redelivery delay ends",
}

// brokerStatus lays out the broker's state at the cursor: each message as
// the first handler's run left it (the broker behaves the same for every
// handler), and each worker as holding a message when it does in any
// handler's run (a handler may finish sooner than another).
func brokerStatus(tr *playground.Trace, sc *playground.Scenario, at int) ([]messageView, []workerView) {
	var msgs []messageView
	var workers []workerView
	if len(tr.Handlers) == 0 {
		return nil, nil
	}
	states := make([]playground.BrokerState, len(tr.Handlers))
	for i, h := range tr.Handlers {
		states[i] = h.BrokerAfter(at)
	}
	first := states[0]
	for i, m := range sc.Messages {
		ms := first.Messages[i]
		// Status follows the last step that concerned the message, as
		// the page always has: after a second copy's late
		// ack, "late ack refused" though ms.Acked (another worker's ack
		// deleted it).
		mv := messageView{ID: m.ID, Status: messageStatus[ms.Status]}
		if ms.Status == playground.StepDeliver {
			mv.Status = "running on " + ms.Worker
		}
		if ms.Status == playground.StepBatchDone {
			mv.Status = "handled by " + ms.Worker
		}
		if m.Kind == playground.KindShip {
			mv.What = "ship " + m.OrderID
		} else if m.Kind == playground.KindPrice {
			mv.What = fmt.Sprintf("set %s's price to %d (version %d)", m.SKU, m.Price, m.Version)
		} else {
			mv.What = "credit " + strconv.FormatInt(m.Amount, 10) + " to " + m.AccountID
			if m.PaymentID != "" {
				mv.What += " (payment " + m.PaymentID + ")"
			}
		}
		msgs = append(msgs, mv)
	}
	for i, w := range sc.Workers {
		wv := workerView{Name: w, Status: "idle"}
		for _, st := range states {
			if m := st.Workers[i].Holding; m != "" {
				wv.Status, wv.Busy = "holding "+m, true
				break
			}
		}
		workers = append(workers, wv)
	}
	return msgs, workers
}

// ----- Small helpers for the templates -----

// scriptLines is the state's script one event per line, for the editor.
func (pv *View) scriptLines() string {
	return (&playground.Script{Events: pv.state.Events}).Lines()
}

// homeHref is where this playground started, for the script that restores
// blocks the Back button leaves behind.
func (pv *View) homeHref() string {
	return pv.self[:len(pv.self)-len(pv.Place.Href(pv.state))] + pv.Place.QueryHref(pv.Place.Home)
}

func pgKeysWhere(pv *View) string {
	if pv.Place.InLesson() {
		return " (click or tab into it first)"
	}
	return ""
}

// crossPath is the diagram's ✕ at (x, y), written without fmt: it is
// drawn once per crash on every click.
func crossPath(x, y int) string {
	b := make([]byte, 0, 40)
	for i, p := range [8]int{x - 5, y - 5, x + 5, y + 5, x + 5, y - 5, x - 5, y + 5} {
		switch i {
		case 0:
			b = append(b, 'M')
		case 2, 6:
			b = append(b, 'L')
		case 4:
			b = append(b, 'M')
		default:
			b = append(b, ' ')
		}
		b = strconv.AppendInt(b, int64(p), 10)
	}
	return string(b)
}

// labelY puts an arrow's label above the line and a mark's beside it.
func labelY(r diagramRow) int {
	if r.Arrow {
		return r.Y - 8
	}
	return r.Y
}

// pickerCard is one scenario on the picker page.
type pickerCard struct {
	Name, Title, Story, Handlers, Script, Href string
}

func pickerCards(v *site.View) []pickerCard {
	var out []pickerCard
	for _, sc := range playground.Scenarios() {
		out = append(out, pickerCard{
			Name: sc.Name, Title: sc.Title, Story: sc.Story, Script: sc.DefaultScript,
			Handlers: strings.Join(sc.Handlers, ", "),
			Href:     v.Path(playurl.ScenarioHref(sc.Name)),
		})
	}
	return out
}
