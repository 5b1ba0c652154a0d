package playground

import (
	"fmt"
	"slices"
	"sort"
	"strconv"
	"strings"
)

// Effects outside the database. A handler reaches two simulated systems
// with a CALL statement, which runs in the engine, not in SQLite:
//
//	CALL provider.charge(:amount, key => :payment_id);
//	CALL email.send(:account_id);
//
// The payment provider charges once per idempotency key while it remembers
// the key: a call that repeats a key it still holds gets the first charge
// back, and no money moves (Stripe's idempotent requests). It forgets a key
// once the key is Settings.KeyLifetimeTicks old (Stripe may prune keys once
// they are 24 hours old), and a call after that is a new charge. A call
// without a key always charges. The email sender has no keys: every call
// sends. Neither is undone by a rollback or a crash: that is the point.

// Outside effects a scenario can require of each credit (Scenario.Outside).
const (
	OutsideCharge = "charge" // one charge at the payment provider
	OutsideEmail  = "email"  // one receipt email
)

// Call targets.
const (
	callCharge = "provider.charge"
	callEmail  = "email.send"
)

// The outside systems' records, shown beside the ledger's tables (they are
// not SQLite tables: SQL cannot reach them).
const (
	ChargesTable = "provider.charges"
	EmailsTable  = "email.sent"
)

var outsideColumns = map[string][]string{
	ChargesTable: {"charge", "key", "amount", "message", "tick"},
	EmailsTable:  {"email", "to", "message", "tick"},
}

// outsideCall is a parsed CALL statement.
type outsideCall struct {
	Target string // callCharge or callEmail
	Arg    string // the parameter of the amount (charge) or the recipient (email), without ':'
	Key    string // the parameter of the idempotency key, without ':'; "" for none
}

// callUsage is how each target is called, for error messages and the reference.
var callUsage = map[string]string{
	callCharge: "CALL provider.charge(:amount, key => :payment_id)",
	callEmail:  "CALL email.send(:account_id)",
}

// fillCall parses "CALL target(:param[, key => :param])".
func (st *statement) fillCall(text string) error {
	rest := strings.TrimSpace(text[len("CALL"):])
	open := strings.IndexByte(rest, '(')
	if open < 0 || !strings.HasSuffix(rest, ")") {
		return fmt.Errorf("CALL needs a target and its arguments in parentheses, e.g. %s or %s", callUsage[callCharge], callUsage[callEmail])
	}
	c := &outsideCall{Target: strings.TrimSpace(rest[:open])}
	usage, ok := callUsage[c.Target]
	if !ok {
		return fmt.Errorf("CALL can reach provider.charge or email.send, not %q", clip(c.Target))
	}
	args := strings.Split(rest[open+1:len(rest)-1], ",")
	for i, a := range args {
		a = strings.TrimSpace(a)
		name, value, named := strings.Cut(a, "=>")
		if named {
			name, value = strings.TrimSpace(name), strings.TrimSpace(value)
			if c.Target != callCharge || name != "key" || i != len(args)-1 || i == 0 {
				return fmt.Errorf("%s: unexpected %q; write %s", c.Target, clip(a), usage)
			}
			p, err := callParam(value)
			if err != nil {
				return err
			}
			c.Key = p
			continue
		}
		if i > 0 {
			return fmt.Errorf("%s takes one argument before any key, not %q; write %s", c.Target, clip(a), usage)
		}
		if a == "" {
			return fmt.Errorf("%s needs an argument; write %s", c.Target, usage)
		}
		p, err := callParam(a)
		if err != nil {
			return err
		}
		c.Arg = p
	}
	st.SQL, st.Call = text, c
	st.Params = append(st.Params, c.Arg)
	if c.Key != "" && c.Key != c.Arg {
		st.Params = append(st.Params, c.Key)
	}
	return nil
}

// callParam checks one argument of a CALL: a known parameter.
func callParam(a string) (string, error) {
	if !strings.HasPrefix(a, ":") || !contains(handlerParams, a[1:]) {
		return "", fmt.Errorf("a CALL argument is a parameter (:%s), not %q", strings.Join(handlerParams, ", :"), clip(a))
	}
	return a[1:], nil
}

// outsideWorld is what the provider and the email sender have recorded in
// one run. It lives beside the effect ledger (accounting.go) so that the
// explorer's snapshots and state keys include it.
type outsideWorld struct {
	keys    map[string]providerKey
	charges []outsideRecord
	emails  []outsideRecord
}

// providerKey is the first result the provider keeps for a key.
type providerKey struct {
	charge int // index into charges
	at     int64
}

// outsideRecord is one charge made or one email sent.
type outsideRecord struct {
	message string // the message whose handler called
	key     string // charges: the idempotency key ("" none)
	to      string // emails: the recipient
	amount  int64
	tick    int64
	step    int
}

func newOutsideWorld() *outsideWorld { return &outsideWorld{keys: map[string]providerKey{}} }

func (o *outsideWorld) clone() *outsideWorld {
	c := &outsideWorld{keys: make(map[string]providerKey, len(o.keys)),
		charges: append([]outsideRecord(nil), o.charges...), emails: append([]outsideRecord(nil), o.emails...)}
	for k, v := range o.keys {
		c.keys[k] = v
	}
	return c
}

// keyString is the outside world for the explorer's state key.
func (o *outsideWorld) keyString() string {
	var b strings.Builder
	keys := make([]string, 0, len(o.keys))
	for k, v := range o.keys {
		keys = append(keys, fmt.Sprintf("%s=%d@%d", k, v.charge, v.at))
	}
	sort.Strings(keys)
	b.WriteString(strings.Join(keys, ","))
	for _, r := range o.charges {
		fmt.Fprintf(&b, "|c:%s:%s:%d:%d", r.message, r.key, r.amount, r.tick)
	}
	for _, r := range o.emails {
		fmt.Fprintf(&b, "|e:%s:%s", r.message, r.to)
	}
	return b.String()
}

func chargeID(i int) string { return "ch_" + strconv.Itoa(i+1) }
func emailID(i int) string  { return "em_" + strconv.Itoa(i+1) }

// stepCall runs a CALL statement: the outside system acts at once and for
// good, whatever the worker's transaction does next.
func (s *sim) stepCall(w *worker, stmt *statement) (outcome, error) {
	j := w.job
	c := stmt.Call
	args, _ := s.bind(stmt, j.msg.m)
	value := func(name string) any {
		for _, a := range args {
			if a.Name == name {
				return a.Value
			}
		}
		return nil
	}
	st := Step{Kind: StepProvider, Worker: w.name, Message: j.msg.m.ID, Attempt: j.attempt, Copy: j.msg.label(),
		Statement: j.pc + 1, Line: stmt.Line, SQL: stmt.SQL, Args: args}
	o := s.fx.outside
	rec := outsideRecord{message: j.msg.m.ID, tick: s.now, step: len(s.steps) + 1}
	switch c.Target {
	case callEmail:
		st.Kind = StepEmail
		rec.to = valueText(value(c.Arg))
		o.emails = append(o.emails, rec)
		st.Note = fmt.Sprintf("sent the receipt for %s to %s (%s); an email has no idempotency key, so every call sends one", rec.message, rec.to, emailID(len(o.emails)-1))
		s.changed[EmailsTable+"/"+emailID(len(o.emails)-1)] = true
	case callCharge:
		if st.Error = s.outageRefusal(); st.Error != "" { // backoff.go
			return s.callFailed(w, st)
		}
		amount, isInt := value(c.Arg).(int64)
		if !isInt {
			st.Error = fmt.Sprintf("the provider refuses: the amount %s is not a whole number", valueText(value(c.Arg)))
			return s.callFailed(w, st)
		}
		rec.amount = amount
		if c.Key != "" {
			if k, ok := value(c.Key).(string); ok {
				rec.key = k
			} else if v := value(c.Key); v != nil {
				rec.key = valueText(v)
			}
		}
		suffix := ""
		if first, ok := o.keys[rec.key]; ok && rec.key != "" {
			age := s.now - first.at
			switch lifetime := s.sc.Settings.KeyLifetimeTicks; {
			case lifetime > 0 && age >= lifetime:
				delete(o.keys, rec.key)
				suffix = fmt.Sprintf(": a new charge, because the key is %d %ss old and the provider forgets keys after %d", age, s.sc.TickUnit, lifetime)
			case o.charges[first.charge].amount != amount:
				st.Error = fmt.Sprintf("the provider refuses: key %s was first used to charge %s, and a request with other parameters under the same key is an error", rec.key, money(o.charges[first.charge].amount))
				return s.callFailed(w, st)
			default:
				st.Note = fmt.Sprintf("provider returned the first result for key %s (%s, made at tick %d for %s): no new charge", rec.key, chargeID(first.charge), o.charges[first.charge].tick, o.charges[first.charge].message)
				return s.callDone(w, stmt, st)
			}
		}
		o.charges = append(o.charges, rec)
		id := chargeID(len(o.charges) - 1)
		if rec.key != "" {
			o.keys[rec.key] = providerKey{charge: len(o.charges) - 1, at: s.now}
			st.Note = fmt.Sprintf("charged %s with key %s (%s)", money(amount), rec.key, id) + suffix
		} else {
			st.Note = fmt.Sprintf("charged %s without an idempotency key (%s)", money(amount), id)
		}
		s.changed[ChargesTable+"/"+id] = true
	}
	return s.callDone(w, stmt, st)
}

// money prints an amount in cents as "10.00".
func money(cents int64) string {
	sign := ""
	if cents < 0 {
		sign, cents = "-", -cents
	}
	return fmt.Sprintf("%s%d.%02d", sign, cents/100, cents%100)
}

// callDone records a CALL step and moves the worker on, as stepWorker
// does after a statement (crash-after counts a CALL as a statement).
func (s *sim) callDone(w *worker, stmt *statement, st Step) (outcome, error) {
	j := w.job
	s.record(st)
	j.pc++
	j.executed++
	if err := s.over(); err != nil {
		return 0, err
	}
	if j.fault == FaultCrashAfter && j.executed == j.faultAfter {
		return finished, s.crash(w, StepCrash, fmt.Sprintf("crash-after %d: %s dies after statement %d", j.faultAfter, w.name, j.executed))
	}
	return progressed, nil
}

// callFailed records a refused CALL: the handler fails without acking, as
// after a failed statement.
func (s *sim) callFailed(w *worker, st Step) (outcome, error) {
	s.record(st)
	s.abort(w)
	return finished, nil
}

// outsideTableNames are the outside systems' records a scenario shows.
func (sc *Scenario) outsideTableNames() []string {
	var out []string
	if contains(sc.Outside, OutsideCharge) {
		out = append(out, ChargesTable)
	}
	if contains(sc.Outside, OutsideEmail) {
		out = append(out, EmailsTable)
	}
	return out
}

// outsideTables renders the outside systems' records for a frame: the
// scenario's, and any other a handler wrote to.
func (sc *Scenario) outsideTables(o *outsideWorld) []TableRows {
	var out []TableRows
	if o == nil {
		o = newOutsideWorld()
	}
	if contains(sc.Outside, OutsideCharge) || len(o.charges) > 0 {
		tr := TableRows{Table: ChargesTable, Columns: outsideColumns[ChargesTable], Rows: []Row{}}
		for i, r := range o.charges {
			var key any
			if r.key != "" {
				key = r.key
			}
			tr.Rows = append(tr.Rows, Row{Key: chargeID(i), Values: []any{chargeID(i), key, r.amount, r.message, r.tick}})
		}
		out = append(out, tr)
	}
	if contains(sc.Outside, OutsideEmail) || len(o.emails) > 0 {
		tr := TableRows{Table: EmailsTable, Columns: outsideColumns[EmailsTable], Rows: []Row{}}
		for i, r := range o.emails {
			tr.Rows = append(tr.Rows, Row{Key: emailID(i), Values: []any{emailID(i), r.to, r.message, r.tick}})
		}
		out = append(out, tr)
	}
	return out
}

// snapshot is a frame's ledger: the committed rows and the outside
// systems' records.
func (s *sim) snapshot() []TableRows {
	return append(s.l.snapshot(), s.sc.outsideTables(s.fx.outside)...)
}

// snapshotReuseOff makes every frame's snapshot whole: tests compare.
var snapshotReuseOff bool

// snapshotAfter is snapshot after an event whose previous frame's rows
// were prev (nil: none): a ledger table that no commit of the event changed
// (s.changed) is prev's, as rendered then (rows are never modified).
func (s *sim) snapshotAfter(prev []TableRows) []TableRows {
	if prev == nil || snapshotReuseOff {
		return s.snapshot()
	}
	var changed uint64 // bit i: tableOrder[i]
	for k := range s.changed {
		if t, _, ok := strings.Cut(k, "/"); ok {
			if i := slices.Index(tableOrder, t); i >= 0 {
				changed |= 1 << i
			}
		}
	}
	out := make([]TableRows, 0, len(prev)+1)
	for i, t := range tableOrder {
		if changed&(1<<i) == 0 {
			if j := slices.IndexFunc(prev, func(tr TableRows) bool { return tr.Table == t }); j >= 0 {
				out = append(out, prev[j])
				continue
			}
		}
		if tr, ok := renderTable(s.l.committed, t); ok {
			out = append(out, tr)
		}
	}
	return append(out, s.sc.outsideTables(s.fx.outside)...)
}

// outsideViolations judges the effects outside the database per message:
// each credit that must take effect must be charged (and emailed) exactly
// once when the scenario requires it, and never more than once in any
// scenario. A message the broker still owes is not judged short yet.
func (s *sim) outsideViolations(applies map[string]bool) []Violation {
	o := s.fx.outside
	var out []Violation
	for _, m := range s.sc.Messages {
		if !s.delivered[m.ID] {
			continue
		}
		st := s.msgs[m.ID]
		settled := st.firstOwed() == nil && st.firstDead() == nil
		for _, kind := range []string{OutsideCharge, OutsideEmail} {
			recs := o.charges
			if kind == OutsideEmail {
				recs = o.emails
			}
			var steps []string
			first, second := 0, 0
			for _, r := range recs {
				if r.message != m.ID {
					continue
				}
				steps = append(steps, strconv.Itoa(r.step))
				if first == 0 {
					first = r.step
				} else if second == 0 {
					second = r.step
				}
			}
			required := contains(s.sc.Outside, kind) && applies[m.ID]
			switch {
			case len(steps) > 1:
				detail := fmt.Sprintf("%s was charged %d times at the provider (steps %s)", m.ID, len(steps), strings.Join(steps, ", "))
				if kind == OutsideEmail {
					detail = fmt.Sprintf("%s's receipt was emailed %d times (steps %s): an email has no idempotency key", m.ID, len(steps), strings.Join(steps, ", "))
				}
				out = append(out, Violation{Kind: VerdictDuplicate, MessageID: m.ID, Step: second, Detail: detail, Effect: kind})
			case len(steps) == 0 && required && settled:
				detail := m.ID + " was acked but no charge was made for it"
				if kind == OutsideEmail {
					detail = m.ID + " was acked but its receipt was never sent"
				}
				out = append(out, Violation{Kind: VerdictLost, MessageID: m.ID, Step: s.lastStepOf(m.ID), Detail: detail, Effect: kind})
			}
		}
	}
	return out
}

// callReference lists the CALL statements for the handler reference; a
// test parses every example.
var callReference = []CallReference{
	{Name: callCharge, Usage: callUsage[callCharge],
		Meaning: "charge the message's amount at the payment provider, outside the database: a rollback or a crash does not undo it. With a key, a repeated call gets the first charge back while the provider remembers the key (the scenario's key lifetime); without one, every call charges",
		Example: "@on credit\nBEGIN;\nINSERT INTO processed_messages(message_id, processed_at) VALUES (:message_id, :now) ON CONFLICT DO NOTHING;\n@stop-if-no-rows\nCALL provider.charge(:amount, key => :payment_id);\nUPDATE accounts SET balance = balance + :amount WHERE id = :account_id;\nCOMMIT;"},
	{Name: callEmail, Usage: callUsage[callEmail],
		Meaning: "email a receipt to the account: an email has no idempotency key, so every call sends one, and nothing undoes it",
		Example: "@on credit\nBEGIN;\nINSERT INTO processed_messages(message_id, processed_at) VALUES (:message_id, :now) ON CONFLICT DO NOTHING;\n@stop-if-no-rows\nUPDATE accounts SET balance = balance + :amount WHERE id = :account_id;\nCOMMIT;\nCALL email.send(:account_id);"},
}

// outsideFigures are the figures of the effects outside the database, after
// the ledger's: per account, the amount charged (ChargesTable) and the
// receipts sent (EmailsTable), for the effects the scenario requires. With
// applies (the messages that must take effect) they are the expected
// figures, without it the actual ones.
func (s *sim) outsideFigures(applies map[string]bool) []Figure {
	if applies != nil {
		return s.sc.outsideFigures(applies, nil)
	}
	return s.sc.outsideFigures(nil, s.fx.outside)
}

// outsideFigures counts the expected figures (applies given) or those of
// the records o (nil: none yet).
func (sc *Scenario) outsideFigures(applies map[string]bool, o *outsideWorld) []Figure {
	var out []Figure
	for _, kind := range sc.Outside {
		table := ChargesTable
		if kind == OutsideEmail {
			table = EmailsTable
		}
		for _, a := range sc.Accounts {
			f := Figure{Table: table, Key: a.ID}
			add := func(id string, amount int64) {
				if m := sc.Message(id); m != nil && m.AccountID == a.ID {
					if kind == OutsideEmail {
						amount = 1
					}
					f.Value += amount
				}
			}
			for _, m := range sc.Messages {
				if applies[m.ID] {
					add(m.ID, m.Amount)
				}
			}
			if o != nil {
				recs := o.charges
				if kind == OutsideEmail {
					recs = o.emails
				}
				for _, r := range recs {
					add(r.message, r.amount)
				}
			}
			out = append(out, f)
		}
	}
	return out
}
