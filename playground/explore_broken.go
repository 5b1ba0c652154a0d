package playground

import (
	"fmt"
	"slices"
	"strings"
)

// Rules every exercise enforces besides its invariants, named like them in
// a counterexample.
const (
	// RuleAckedNotRetried: a handler acks every message, a copy of one it
	// already handled included. A handler that fails once (the loser of
	// two overlapping copies, say) is redelivered, and the redelivery may
	// ack: only one whose every redelivery fails, so that the broker
	// dead-letters the message, breaks the rule (a poison message).
	RuleAckedNotRetried = "acked-not-retried"
	// RuleBoundedStorage: with bounds.max_id_age, the dedupe table does
	// not keep an id forever.
	RuleBoundedStorage = "bounded-storage"
)

// broken reports the first rule the run breaks, and says how: a handler
// that failed without acking, or a message dead-lettered (always); a
// message whose effect is in the ledger twice, or an effect its business
// rule forbids (as soon as it commits, settled or not, when the invariants
// care about duplicates); and, once the schedule has settled, the
// exercise's invariants on the figures and every message that must take
// effect having taken it.
func (x *explorer) broken(s *sim, settled bool) (string, string) {
	for _, st := range s.steps {
		if st.Kind == StepDeadLetter {
			return RuleAckedNotRetried, fmt.Sprintf("%s was dead-lettered: the broker gave up on it after %d deliveries", st.Message, s.sc.Settings.MaxDeliveries)
		}
	}
	dupInv, lostInv := "", ""
	for _, inv := range x.invariants {
		switch inv {
		case InvariantExactlyOnce:
			dupInv, lostInv = inv, inv
		case InvariantShippedOnceIfPaid, InvariantNoDuplicateEffect:
			if dupInv == "" {
				dupInv = inv
			}
		case InvariantNoLostEffect:
			lostInv = inv
		}
	}
	_, applies := s.reference(nil)
	accounts := s.account(applies)
	for _, id := range x.msgs {
		acc, ok := accounts.of(s.sc, id)
		if !ok || dupInv == "" {
			continue
		}
		m := s.msgs[id].m
		switch {
		case acc.unexpectedAt > 0:
			return dupInv, fmt.Sprintf("%s shipped order %s, which was not paid", id, m.OrderID)
		case acc.times > 1 && m.Kind == KindShip:
			return dupInv, fmt.Sprintf("order %s shipped %d times, expected once", m.OrderID, acc.times)
		case acc.times > 1 && len(acc.carriers) > 1:
			return dupInv, fmt.Sprintf("payment %s credited %d times to %s (%s carry it), expected once", m.BusinessKey(), acc.times, m.AccountID, joinAnd(acc.carriers))
		case acc.times > 1:
			return dupInv, fmt.Sprintf("%s credited %d times to %s, expected once", id, acc.times, m.AccountID)
		}
	}
	if !settled {
		return "", ""
	}
	if inv, d := x.storageBroken(s); inv != "" {
		return inv, d
	}
	inv, d := exerciseInvariantBroken(x.invariants, x.sc, s.expected(), s.actual())
	// A missing effect is told by its message first: "msg-2 was acked but
	// its effect is not in the ledger (acc-1 balance 150, expected 170)".
	for _, id := range x.msgs {
		if acc, ok := accounts.of(s.sc, id); ok && lostInv != "" && acc.applies && acc.times == 0 {
			lost := fmt.Sprintf("%s was acked but its effect is not in the ledger", id)
			if acc.droppedBy != "" {
				lost = s.droppedDetail(s.msgs[id].m, acc)
			}
			if inv != "" {
				lost += " (" + d + ")"
			}
			return lostInv, lost
		}
	}
	return inv, d
}

// storageBroken applies bounds.max_id_age: an id recorded at tick t must be
// gone once a handler has run at tick t+max_id_age or later. An id is
// remembered wherever the handler keeps it: any table but the business
// ones (accounts, orders, shipments, prices, offsets) whose row holds a
// message id or payment key of the scenario is a dedupe store, and the
// row was recorded when the commit that wrote it last ran.
func (x *explorer) storageBroken(s *sim) (string, string) {
	if x.b.MaxIDAge <= 0 {
		return "", ""
	}
	lastRun := int64(-1)
	recorded := map[string]int64{} // table/key → tick of the commit that last wrote it
	for _, st := range s.steps {
		if st.Kind == StepDeliver {
			lastRun = st.Tick
		}
		for _, c := range st.Changes {
			if c.Committed && c.After != nil && dedupeStore(c.Table) {
				recorded[c.Table+"/"+c.Key] = st.Tick
			}
		}
	}
	ids := map[string]bool{}
	for _, m := range s.sc.Messages {
		ids[m.ID], ids[m.BusinessKey()] = true, true
	}
	for _, t := range tableOrder {
		if !dedupeStore(t) {
			continue
		}
		rows := s.l.rows(t)
		rowids := make([]int64, 0, len(rows))
		for id := range rows {
			rowids = append(rowids, id)
		}
		slices.Sort(rowids)
		for _, rowid := range rowids {
			row := rows[rowid]
			id := ""
			for _, v := range row {
				if ids[valueText(v)] {
					id = valueText(v)
					break
				}
			}
			at, ok := recorded[t+"/"+rowKey(t, rowid, row)]
			if id == "" || !ok || lastRun < at+x.b.MaxIDAge {
				continue
			}
			why := fmt.Sprintf("the handler never deletes from %s", t)
			if x.h.deletesFrom(t) {
				why = fmt.Sprintf("the handler prunes %s, but keeps ids longer than %d %ss", t, x.b.MaxIDAge, s.sc.TickUnit)
			}
			return RuleBoundedStorage, fmt.Sprintf("the id %s recorded in %s at tick %d is still stored at tick %d, after the handler ran at tick %d: %s", id, t, at, s.now, lastRun, why)
		}
	}
	return "", ""
}

// dedupeStore tells the tables a handler may remember ids in from those
// that hold the business's own records.
func dedupeStore(table string) bool {
	switch table {
	case "accounts", "orders", "shipments", "prices", "consumer_offsets":
		return false
	}
	return true
}

// deletesFrom reports whether any of the handler's statements deletes
// from the table.
func (h *Handler) deletesFrom(table string) bool {
	for _, stmts := range h.sections {
		for _, st := range stmts {
			if st.Verb == "DELETE" && strings.Contains(strings.ToLower(st.SQL), strings.ToLower(table)) {
				return true
			}
		}
	}
	return false
}

// judge is broken with failed runs judged as the broker would: a handler
// that failed on a message and did not ack breaks RuleAckedNotRetried
// only if the message is never acked, that is if redelivering it (as the
// broker does after the lease, with every other worker let finish) fails
// until it is dead-lettered. A failure the next redelivery heals (it finds
// the id the winner committed, and acks) is no poison message. events is
// the schedule that led to s.
func (x *explorer) judge(events []Event, s *sim, settled bool) (string, string) {
	inv, detail := x.broken(s, settled)
	if inv != "" {
		return inv, detail
	}
	for _, st := range s.steps {
		if st.Kind != StepAbort || !x.unacked(s, st.Message) {
			continue
		}
		deliveries, healed, err := x.redeliverUntilAcked(events, st.Message)
		if err != nil || healed {
			continue
		}
		why := ""
		if prev := st.Index - 2; prev >= 0 && s.steps[prev].Error != "" {
			why = " (" + cleanSQLError(s.steps[prev].Error) + ")"
		}
		return RuleAckedNotRetried, fmt.Sprintf("%s's handler failed on %s's delivery %d%s and did not ack, and every redelivery fails the same way: the broker dead-letters it after %d deliveries, a poison message", st.Worker, st.Message, st.Attempt, why, deliveries)
	}
	return "", ""
}

// unacked: a delivered copy of the message is still owed by the broker.
func (x *explorer) unacked(s *sim, id string) bool {
	for _, c := range s.msgs[id].copies {
		if c.deliveries > 0 && c.owed() {
			return true
		}
	}
	return false
}

// redeliverUntilAcked replays events on a fresh ledger, lets every busy
// worker finish, then redelivers the message until it is acked (healed)
// or dead-lettered; it returns the deliveries the message had by then.
func (x *explorer) redeliverUntilAcked(events []Event, id string) (int, bool, error) {
	s, err := x.newSim()
	if err != nil {
		return 0, false, err
	}
	defer x.release(s)
	for _, ev := range events {
		if _, err := x.step(s, ev); err != nil {
			return 0, false, err
		}
	}
	for _, w := range s.workers {
		if w.job != nil {
			if _, err := x.step(s, Event{Kind: EventFinish, Worker: w.name}); err != nil {
				return 0, false, err
			}
		}
	}
	deliveries := 0
	for range s.sc.Settings.MaxDeliveries + 1 {
		if !x.unacked(s, id) {
			break
		}
		if _, err := x.step(s, Event{Kind: EventRedeliver, Message: id}); err != nil {
			return 0, false, err
		}
	}
	for _, c := range s.msgs[id].copies {
		deliveries = max(deliveries, c.deliveries)
		if c.dead {
			return deliveries, false, nil
		}
	}
	return deliveries, !x.unacked(s, id), nil
}
