package playview

import (
	"idemlab/web/playurl"
	"idemlab/web/site"
	"slices"
	"strconv"

	"idemlab/playground"
)

// actionLink is one control: a link to the next state.
type actionLink struct {
	Label   string
	Href    string // "" when the control does not apply now
	Key     string // keyboard shortcut, if any
	Title   string // what it does, in a sentence
	Current bool   // for choices: the one in effect
	TestID  string
	Reason  string // why it is disabled, in the engine's words ("msg-1 was never delivered; …")
}

type messageControls struct {
	Deliver, Redeliver, Publish, Expire actionLink
	Start                               []actionLink // one per worker
	// Redrive moves the message back from the dead-letter queue; the page
	// shows it only while the message is there (the engine says when).
	Redrive actionLink
}

type workerControls struct {
	Step, Finish, Crash, Restart actionLink
}

// amendView offers the faults for the last delivery before the cursor.
type amendView struct {
	Event   string // "deliver msg-1"
	Options []actionLink
}

type handlerChoice struct {
	Name        string
	Description string
	Idempotent  bool
	Checked     bool
}

type keyHelp struct{ Key, Label string }

type controlsView struct {
	Back, Forward, Latest, StartOver, Reset actionLink
	Undo                                    actionLink // history.back(), JS only
	Truncates                               int        // events after the cursor that a new event drops
	Targets                                 []actionLink
	Amend                                   *amendView
	Broker                                  []actionLink
	// Partition is a partition scenario's Poll and Rebalance, drawn where a
	// queue's Deliver controls are (a partition is read by polling).
	Partition      []actionLink
	Handlers       []handlerChoice
	FormAction     string
	StateFields    []playurl.Field // every field of the state
	RetentionTicks int64

	refused map[string]string // probed event text → the engine's reason for refusing it
}

// controlsProbe asks the engine which of the controls' events it would
// refuse at the state's cursor: a control that would only add a skipped
// event is shown disabled, with the engine's reason.
func controlsProbe(sc *playground.Scenario, s playurl.State) *playground.Probe {
	evs := s.Events
	if evs == nil { // the run plays the scenario's default script
		evs = sc.DefaultEvents()
	}
	return &playground.Probe{At: s.Cursor(len(evs)), Events: probedEvents(sc, s)}
}

// probedEvents are the events the message and worker controls add: those
// of the control panels drawn (a closed panel's controls are not).
func probedEvents(sc *playground.Scenario, s playurl.State) []playground.Event {
	workers, broker := s.Open.Has(playurl.MoreWorkers), s.Open.Has(playurl.MoreBroker)
	var out []playground.Event
	for _, m := range sc.Messages {
		for _, kind := range []string{playground.EventDeliver, playground.EventRedeliver, playground.EventPublish, playground.EventRedrive} {
			out = append(out, playground.Event{Kind: kind, Message: m.ID, Worker: s.To})
		}
		if !workers {
			continue
		}
		out = append(out, playground.Event{Kind: playground.EventExpire, Message: m.ID})
		for _, w := range sc.Workers {
			out = append(out, playground.Event{Kind: playground.EventStart, Message: m.ID, Worker: w})
		}
	}
	if workers {
		for _, w := range sc.Workers {
			out = append(out, playground.Event{Kind: playground.EventStep, Worker: w}, playground.Event{Kind: playground.EventFinish, Worker: w})
		}
	}
	if !broker {
		return out
	}
	if sc.Partition != nil {
		out = append(out, partitionEvents...)
	}
	return append(out, playground.Event{Kind: playground.EventReplay})
}

// partitionEvents are the Poll and Rebalance controls' events: a
// partition scenario's owner reads with poll, and a rebalance moves it.
var partitionEvents = []playground.Event{{Kind: playground.EventPoll}, {Kind: playground.EventRebalance}}

// refusals maps each probed event (canonical text) to the engine's reason
// for refusing it; events it would act on are absent.
func refusals(sc *playground.Scenario, s playurl.State, tr *playground.Trace) map[string]string {
	evs := probedEvents(sc, s)
	if len(tr.Refusals) != len(evs) {
		return nil // not probed: every control stays enabled
	}
	out := map[string]string{}
	for i, ev := range evs {
		if tr.Refusals[i] != "" {
			out[ev.String()] = tr.Refusals[i]
		}
	}
	return out
}

// offer is the link to the state after ev, or a disabled control saying
// why the engine would refuse ev.
func (c *controlsView) offer(l actionLink, ev playground.Event, href func(playurl.State) string, s playurl.State) actionLink {
	if why := c.refused[ev.String()]; why != "" {
		l.Reason = why
		return l
	}
	l.Href = href(s.AppendEvent(ev))
	return l
}

func newControls(v *site.View, pv *View) controlsView {
	p, s, at, total := pv.Place, pv.state, pv.at, pv.total
	href := func(next playurl.State) string { return v.Path(p.Href(next)) }
	c := controlsView{
		FormAction:     v.Path(p.Path),
		Truncates:      total - at,
		RetentionTicks: pv.scenario.Settings.RetentionTicks,
		refused:        refusals(pv.scenario, s, pv.trace),
	}
	c.Back = actionLink{Label: "Back one event", Key: "ArrowLeft", Title: "Show the state one event earlier", TestID: "pg-back"}
	c.Forward = actionLink{Label: "Forward one event", Key: "ArrowRight", Title: "Show the state one event later", TestID: "pg-forward"}
	c.StartOver = actionLink{Label: "Before any event", Key: "Home", Title: "Show the ledgers before the first event; adding an event from here starts a new script", TestID: "pg-start-over"}
	c.Latest = actionLink{Label: "Latest", Key: "End", Title: "Show the state after the last event", TestID: "pg-latest"}
	if at > 0 {
		c.Back.Href = href(s.WithAt(at-1, total))
		c.StartOver.Href = href(s.WithAt(0, total))
	}
	if at < total {
		c.Forward.Href = href(s.WithAt(at+1, total))
		c.Latest.Href = href(s.WithAt(total, total))
	}
	c.Reset = actionLink{Label: "Reset", Key: "0", Title: "Back to where this playground started", TestID: "pg-reset"}
	if !s.Equal(p.Home) {
		c.Reset.Href = href(p.Home)
	}
	c.Undo = actionLink{Label: "Undo", Key: "u", Title: "Go back to the previous state (the browser's Back button)"}

	// Which worker the delivery controls name.
	any := s
	any.To = ""
	c.Targets = append(c.Targets, actionLink{Label: "first idle", Href: href(any), Current: s.To == "", Title: "Let the broker pick the first idle worker"})
	for _, w := range pv.scenario.Workers {
		next := s
		next.To = w
		c.Targets = append(c.Targets, actionLink{Label: w, Href: href(next), Current: s.To == w, Title: "Deliveries go to worker " + w})
	}

	// Per message: deliver, redeliver, publish again, start on W, expire.
	evs := s.Events
	if at > len(evs) {
		at = len(evs)
	}
	firstUndelivered, lastDelivered := "", ""
	for _, ev := range evs[:at] {
		switch ev.Kind {
		case playground.EventDeliver, playground.EventRedeliver, playground.EventPublish, playground.EventStart:
			lastDelivered = ev.Message
		}
	}
	for i := range pv.messages {
		m := &pv.messages[i]
		if firstUndelivered == "" && m.Status == "not delivered yet" {
			firstUndelivered = m.ID
		}
	}
	if firstUndelivered == "" && len(pv.messages) > 0 {
		firstUndelivered = pv.messages[0].ID
	}
	for i := range pv.messages {
		m := &pv.messages[i]
		ev := func(kind string) playground.Event {
			return playground.Event{Kind: kind, Message: m.ID, Worker: s.To}
		}
		mc := messageControls{
			Deliver:   c.offer(actionLink{Label: "Deliver", Title: "The broker leases " + m.ID + " to a worker, which runs its handler and acks", TestID: "pg-deliver"}, ev(playground.EventDeliver), href, s),
			Redeliver: c.offer(actionLink{Label: "Redeliver", Title: "The broker delivers " + m.ID + " again, as when its lease ran out without an ack", TestID: "pg-redeliver"}, ev(playground.EventRedeliver), href, s),
			Publish:   c.offer(actionLink{Label: "Publish again", Title: "The producer sends " + m.ID + " again (same id, a new copy), as a retried webhook does", TestID: "pg-publish"}, ev(playground.EventPublish), href, s),
			Redrive: c.offer(actionLink{Label: "Redrive", Title: "An operator moves " + m.ID + " from the dead-letter queue back to the queue: it is delivered again, its count of deliveries starting over", TestID: "pg-redrive"},
				ev(playground.EventRedrive), href, s),
		}
		if m.ID == firstUndelivered {
			mc.Deliver.Key = "d"
		}
		if m.ID == lastDelivered {
			mc.Redeliver.Key, mc.Publish.Key = "r", "p"
		}
		if s.Open.Has(playurl.MoreWorkers) { // closed, its panel's controls are not drawn
			mc.Expire = c.offer(actionLink{Label: "Expire lease", Title: m.ID + "'s lease runs out now; a running worker's ack will be refused", TestID: "pg-expire"}, playground.Event{Kind: playground.EventExpire, Message: m.ID}, href, s)
			for _, w := range pv.workers {
				l := actionLink{Label: "Start on " + w.Name, Title: "Worker " + w.Name + " receives " + m.ID + " and waits; step it one statement at a time", TestID: "pg-start"}
				mc.Start = append(mc.Start, c.offer(l, playground.Event{Kind: playground.EventStart, Message: m.ID, Worker: w.Name}, href, s))
			}
		}
		m.Control = mc
	}

	// Per worker, in the workers' panel: step, finish, crash, restart.
	for i := range pv.workers {
		if !s.Open.Has(playurl.MoreWorkers) {
			break
		}
		w := &pv.workers[i]
		wc := workerControls{
			Step:    c.offer(actionLink{Label: "Step", Title: w.Name + " runs its next statement (or acks after the last)", TestID: "pg-step"}, playground.Event{Kind: playground.EventStep, Worker: w.Name}, href, s),
			Finish:  c.offer(actionLink{Label: "Finish", Title: w.Name + " runs the rest of its handler and acks", TestID: "pg-finish"}, playground.Event{Kind: playground.EventFinish, Worker: w.Name}, href, s),
			Crash:   actionLink{Label: "Crash", Title: w.Name + " dies now: open transaction rolled back, no ack, in-process filter lost", TestID: "pg-crash"},
			Restart: actionLink{Label: "Restart", Href: href(s.AppendEvent(playground.Event{Kind: playground.EventRestart, Worker: w.Name})), Title: w.Name + " restarts: its in-process filter is lost", TestID: "pg-restart"},
		}
		if w.Busy {
			wc.Crash.Href = href(s.AppendEvent(playground.Event{Kind: playground.EventCrash, Worker: w.Name}))
		}
		w.Control = wc
	}

	// Faults on the last delivery before the cursor: amend that event.
	if at > 0 {
		last := evs[at-1]
		switch last.Kind {
		case playground.EventDeliver, playground.EventRedeliver, playground.EventPublish:
			plain := last
			plain.Fault, plain.FaultAfter = "", 0
			a := &amendView{Event: plain.String()}
			opt := func(label, fault string, after int, key, title, testID string) {
				ev := plain
				ev.Fault, ev.FaultAfter = fault, after
				a.Options = append(a.Options, actionLink{Label: label, Href: href(s.AmendLast(ev)), Key: key, Title: title, TestID: testID,
					Current: last.Fault == fault && last.FaultAfter == after})
			}
			opt("No fault", "", 0, "", "The worker runs the handler and its ack arrives", "pg-fault-none")
			opt("Lose the ack", playground.FaultLoseAck, 0, "l", "The handler commits but the ack never reaches the broker", "pg-lose-ack")
			opt("Crash before the ack", playground.FaultCrashBeforeAck, 0, "c", "The worker dies after its last statement, before acking", "pg-crash-before-ack")
			for k := 1; k <= statementsInEvent(pv.trace, at); k++ {
				opt("Crash after statement "+strconv.Itoa(k), playground.FaultCrashAfter, k, "", "The worker dies after its statement "+strconv.Itoa(k)+"; an open transaction rolls back", "pg-crash-after")
			}
			c.Amend = a
		}
	}

	if s.Open.Has(playurl.MoreHandlers) {
		for _, h := range playground.Handlers() {
			c.Handlers = append(c.Handlers, handlerChoice{Name: h.Name, Description: h.Description, Idempotent: h.Idempotent,
				Checked: slices.ContainsFunc(pv.trace.Handlers, func(t *playground.HandlerTrace) bool { return t.Name == h.Name })})
		}
	}
	if pv.scenario.Partition != nil {
		c.Partition = []actionLink{
			c.offer(actionLink{Label: "Poll", Title: "The partition's owner fetches its next batch and runs its handler on each record", TestID: "pg-poll"}, partitionEvents[0], href, s),
			c.offer(actionLink{Label: "Rebalance", Title: "The group gives the partition to the next consumer, which seeks to where the offsets say", TestID: "pg-rebalance"}, partitionEvents[1], href, s),
		}
	}
	if !s.Open.Has(playurl.MoreBroker) {
		return c
	}

	// The broker and the clock.
	c.StateFields = p.FormFields(s)
	c.Broker = []actionLink{
		c.offer(actionLink{Label: "Replay from offset 0", Title: "The consumer rewinds: every message published so far is delivered again, in order", TestID: "pg-replay"}, playground.Event{Kind: playground.EventReplay}, href, s),
		{Label: "Prune the dedupe table", Href: href(s.AppendEvent(playground.Event{Kind: playground.EventPrune})), Title: "Delete dedupe rows older than the retention (" + strconv.FormatInt(pv.scenario.Settings.RetentionTicks, 10) + " " + pv.tickUnit + "s)", TestID: "pg-prune"},
		{Label: "Advance " + ticksText(pv.scenario.Settings.LeaseTicks, pv.tickUnit), Href: href(s.AppendEvent(playground.Event{Kind: playground.EventAdvance, N: max(pv.scenario.Settings.LeaseTicks, 1)})), Title: "The clock moves on by one lease", TestID: "pg-advance"},
	}

	return c
}

// keysHelp are the playground's keyboard shortcuts, as its help lists them.
var keysHelp = []keyHelp{
	{"d", "deliver the next message"},
	{"r", "redeliver the last message"},
	{"p", "publish the last message again"},
	{"l", "lose the ack of the last delivery"},
	{"c", "crash before the ack of the last delivery"},
	{"←", "back one event"},
	{"→", "forward one event"},
	{"Home", "before any event"},
	{"End", "latest event"},
	{"0", "reset"},
	{"u", "undo (the browser's Back)"},
	{"?", "show or hide these shortcuts"},
}

// statementsInEvent is the most SQL statements any handler ran in an event:
// the crash points "crash after statement k" can name.
func statementsInEvent(tr *playground.Trace, event int) int {
	most := 0
	for _, h := range tr.Handlers {
		n := 0
		for _, st := range h.Steps {
			if st.Event == event && st.Kind == playground.StepSQL {
				n++
			}
		}
		most = max(most, n)
	}
	return most
}

func ticksText(n int64, unit string) string {
	if n == 1 {
		return "1 " + unit
	}
	return strconv.FormatInt(n, 10) + " " + unit + "s"
}
