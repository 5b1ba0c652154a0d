package playground

import "slices"

// What a trace says at a cursor: the engine's own rules for the verdict,
// the broker's state and the effects at any point of a run, so that a UI
// only lays them out.

// FiguresAt returns the figures expected and actual after the first event
// events (0: before any, the scenario's initial figures).
func (h *HandlerTrace) FiguresAt(sc *Scenario, event int) (expected, actual []Figure) {
	if event <= 0 || event > len(h.Frames) {
		init := sc.InitialFigures()
		return init, init
	}
	f := h.Frames[event-1]
	return f.Expected, f.Actual
}

// VerdictAt is the verdict after the first event events (the frame's,
// computed by the engine with the run's per-message rule): ok before any.
func (h *HandlerTrace) VerdictAt(event int) string {
	if event <= 0 || event > len(h.Frames) {
		return VerdictOK
	}
	return h.Frames[event-1].Verdict
}

// UnsettledAt says which messages are dead-lettered or in flight after the
// first event events, and why.
func (h *HandlerTrace) UnsettledAt(event int) []MessageOutcome {
	if event <= 0 || event > len(h.Frames) {
		return nil
	}
	return h.Frames[event-1].Unsettled
}

// MessageState is where a message stands with the broker. Status is the
// kind of the last step that concerned it (StepDeliver: leased to Worker;
// StepAck; StepAckLost; StepAckRefused; StepCrash: its worker died
// holding it; StepLeaseExpired; StepDeadLetter; in a partition,
// StepBatchDone: Worker handled it and moved on), or "" before its first
// delivery. Acked says whether the broker has deleted it, every copy the
// producer published (Step.Copy) acked: a second delivery's late ack
// (StepAckRefused) after another worker's ack of the same copy leaves it
// deleted, and acking a republished copy leaves an earlier one owed.
type MessageState struct {
	ID     string
	Status string
	Worker string // the worker it was last delivered to
	Acked  bool
}

// WorkerState is what a worker holds: a message id, or "" when idle.
type WorkerState struct {
	Name    string
	Holding string
}

// BrokerState is the broker's state at a point of one handler's run:
// each message's standing, in scenario order, and each worker's hands.
type BrokerState struct {
	Messages []MessageState
	Workers  []WorkerState
}

// Held lists "msg-1 on B" for each message a worker holds.
func (b BrokerState) Held() []string {
	var out []string
	for _, w := range b.Workers {
		if w.Holding != "" {
			out = append(out, w.Holding+" on "+w.Name)
		}
	}
	return out
}

// BrokerAfter is the broker's state after the first event events.
func (h *HandlerTrace) BrokerAfter(event int) BrokerState {
	n := 0
	for n < len(h.Steps) && h.Steps[n].Event <= event {
		n++
	}
	return h.BrokerAt(n)
}

// BrokerAt is the broker's state after the first n steps of the run. Each
// step records what the broker did (a delivery, an ack, a lost or refused
// ack, a crash, a lease running out, a dead letter); the state is those
// records applied in order, with the rules below, which are the engine's.
func (h *HandlerTrace) BrokerAt(n int) BrokerState {
	b := BrokerState{Messages: make([]MessageState, len(h.messages)), Workers: make([]WorkerState, len(h.workers))}
	for i, id := range h.messages {
		b.Messages[i].ID = id
	}
	for i, name := range h.workers {
		b.Workers[i].Name = name
	}
	// A scenario has a few messages and workers: a scan finds them
	// sooner than a map would be built.
	find := func(id, worker string) (*MessageState, *WorkerState) {
		var m *MessageState
		var w *WorkerState
		for i := range b.Messages {
			if id != "" && b.Messages[i].ID == id {
				m = &b.Messages[i]
			}
		}
		for i := range b.Workers {
			if worker != "" && b.Workers[i].Name == worker {
				w = &b.Workers[i]
			}
		}
		return m, w
	}
	acked := map[string][]bool{} // message → copy number-1 → acked
	for _, st := range h.Steps[:min(max(n, 0), len(h.Steps))] {
		m, w := find(st.Message, st.Worker)
		if w != nil && w.Holding != "" && (st.Kind == StepDeliver || st.Kind == StepBatchDone) {
			// A partition's consumer moves on to the next record of its
			// batch, or ends the batch: the record it held is handled.
			if prev, _ := find(w.Holding, ""); prev != nil && prev.Status == StepDeliver {
				prev.Status = StepBatchDone
			}
		}
		switch st.Kind {
		case StepDeliver:
			if w != nil {
				w.Holding = st.Message
			}
		case StepAck, StepAckLost, StepAckRefused, StepAbort, StepCrash, StepRestart, StepBatchDone:
			if w != nil {
				w.Holding = ""
			}
		}
		if m == nil {
			continue
		}
		copies, c := acked[st.Message], max(st.Copy, 1)-1
		for len(copies) <= c {
			copies = append(copies, false)
		}
		switch st.Kind {
		case StepDeliver:
			// A copy is owed from its delivery until its ack.
			m.Status, m.Worker, copies[c] = st.Kind, st.Worker, false
		case StepAck:
			m.Status, copies[c] = st.Kind, true
		case StepAckLost, StepAckRefused, StepCrash, StepLeaseExpired, StepDeadLetter, StepBackoff:
			m.Status = st.Kind
		}
		acked[st.Message] = copies
		m.Acked = !slices.Contains(copies, false)
	}
	return b
}

// EffectSteps lists, per message, the steps up to the end of event whose
// commit applied the message's effect (again): each is one application.
// A commit that changed a figure without applying anything again (an
// absolute balance written a second time, stale or not) is not one.
func (h *HandlerTrace) EffectSteps(event int) map[string][]int {
	out := map[string][]int{}
	for _, st := range h.Steps {
		if st.Event > event {
			break
		}
		if st.Effect && st.applied && st.Message != "" {
			out[st.Message] = append(out[st.Message], st.Index)
		}
	}
	return out
}
