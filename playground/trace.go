package playground

import (
	"fmt"
	"io"
	"strings"
	"text/tabwriter"
)

// Trace is the whole result of a run: everything a UI needs to draw the
// sequence diagram, the ledgers, the chart and the SQL, without re-running.
// The package documentation describes each field with an example.
type Trace struct {
	Scenario string          `json:"scenario"`
	Title    string          `json:"title"`
	Script   string          `json:"script"` // canonical form
	Seed     int64           `json:"seed"`
	TickUnit string          `json:"tick_unit"`
	Settings BrokerSettings  `json:"settings"`
	Workers  []string        `json:"workers"`
	Messages []Message       `json:"messages"`
	Events   []EventInfo     `json:"events"`
	Handlers []*HandlerTrace `json:"handlers"`
	// Refusals answers Request.Probe, one per probed event: why it could
	// not happen next in any handler's run (the first handler's reason),
	// or "" when at least one run would act on it.
	Refusals []string `json:"refusals,omitempty"`
	// Ledger names a PostgreSQL ledger (ParseLedger); "" for SQLite.
	Ledger string `json:"ledger,omitempty"`
}

// EventInfo is one script event. Tick is the clock after the event in the
// first handler's run (each handler's frames carry their own ticks).
type EventInfo struct {
	Index   int    `json:"index"` // 1-based, as in "event 3: …"
	Text    string `json:"text"`  // canonical
	Kind    string `json:"kind"`
	Worker  string `json:"worker,omitempty"`
	Message string `json:"message,omitempty"`
	Tick    int64  `json:"tick"`
}

// HandlerTrace is one handler's run against its own fresh ledger.
type HandlerTrace struct {
	Name        string      `json:"name"`
	Description string      `json:"description"`
	Idempotent  bool        `json:"idempotent"`
	Why         string      `json:"why"`
	OK          bool        `json:"ok"`      // every message settled, each took effect as its business rule says, and the figures agree
	Verdict     string      `json:"verdict"` // one of the Verdict… words
	Violations  []Violation `json:"violations"`
	// InFlight lists the delivered messages the broker still owes (leased,
	// lease run out, ack lost, crashed before the ack): not yet judged.
	InFlight []MessageOutcome `json:"in_flight"`
	// DeadLettered lists the messages the broker gave up on.
	DeadLettered    []MessageOutcome `json:"dead_lettered"`
	FirstDivergence *Divergence      `json:"first_divergence"`
	Expected        []Figure         `json:"expected"`
	Actual          []Figure         `json:"actual"`
	Ledger          []TableRows      `json:"ledger"` // final committed rows
	Frames          []Frame          `json:"frames"` // one per event
	Steps           []Step           `json:"steps"`

	messages, workers []string // the scenario's, for BrokerAt
}

// Verdict words. A handler with a violation diverged, and its verdict is
// the kind of its earliest violation; without one, a dead-lettered message
// makes it dead-lettered, a message in flight pending, else it is ok.
const (
	VerdictOK           = "ok"
	VerdictDuplicate    = "duplicate-effect"  // a message took effect more than once
	VerdictLost         = "lost-effect"       // a settled message that must take effect took none
	VerdictUnexpected   = "unexpected-effect" // a message whose business rule says "no effect" took one (shipped an unpaid order)
	VerdictPending      = "pending"           // no violation yet, but the broker still owes a delivery
	VerdictDeadLettered = "dead-lettered"     // the broker gave up on a message after its maximum deliveries
)

// MessageOutcome is a message that is not settled as acked: in flight or
// dead-lettered, and why.
type MessageOutcome struct {
	MessageID string `json:"message_id"`
	Detail    string `json:"detail"`
}

// Violation explains a divergence by message.
type Violation struct {
	Kind      string `json:"kind"` // duplicate-effect, lost-effect or unexpected-effect
	MessageID string `json:"message_id"`
	Step      int    `json:"step"`  // 1-based index into steps
	Event     int    `json:"event"` // 1-based event index
	Detail    string `json:"detail"`
	// Effect names an effect outside the database that went wrong
	// (OutsideCharge, OutsideEmail); "" for the ledger's own.
	Effect string `json:"effect,omitempty"`
}

// Divergence is the earliest violation, with its event's text.
type Divergence struct {
	Step      int    `json:"step"`
	Event     int    `json:"event"`
	EventText string `json:"event_text"`
	MessageID string `json:"message_id"`
	Kind      string `json:"kind"`
	Detail    string `json:"detail"`
}

// Figure is a ledger's key figure: an account's balance, or an order's
// state with its number of shipments as Value.
type Figure struct {
	Table string `json:"table"`
	Key   string `json:"key"`
	Value int64  `json:"value"`
	State string `json:"state,omitempty"`
}

func (f Figure) String() string {
	switch f.Table {
	case ChargesTable:
		return fmt.Sprintf("charged:%s=%d", f.Key, f.Value)
	case EmailsTable:
		return fmt.Sprintf("emailed:%s=%d", f.Key, f.Value)
	}
	if f.Table == "orders" {
		return fmt.Sprintf("%s=%s×%d", f.Key, f.State, f.Value)
	}
	return fmt.Sprintf("%s=%d", f.Key, f.Value)
}

// Frame is the state after one event: committed ledger, figures expected
// and actual, and which rows changed during the event.
type Frame struct {
	Event     int         `json:"event"`
	Tick      int64       `json:"tick"`
	FirstStep int         `json:"first_step"` // 1-based; 0 when the event made no step
	StepCount int         `json:"step_count"`
	Expected  []Figure    `json:"expected"`
	Actual    []Figure    `json:"actual"`
	Ledger    []TableRows `json:"ledger"`
	Changed   []string    `json:"changed"` // "table/key" of rows whose committed value changed
	// Verdict is the handler's verdict after the event, by the same
	// per-message rule as HandlerTrace.Verdict; Unsettled says which
	// messages are dead-lettered or still in flight then, and why.
	Verdict   string           `json:"verdict"`
	Unsettled []MessageOutcome `json:"unsettled,omitempty"`
	// Effects counts, per delivered message, the times its effect is in
	// the committed ledger after the event (-1: the figure is unexplained,
	// e.g. a handler wrote a value no message accounts for). Goals read it
	// (goal.go); it is left out of the JSON trace, whose golden files
	// other tools compare.
	Effects map[string]int `json:"-"`
	// Partition is a partition scenario's consumer group after the event
	// (offsets.go); nil for a queue.
	Partition *PartitionFrame `json:"partition,omitempty"`
}

// TableRows is a table's committed rows in rowid order.
type TableRows struct {
	Table   string   `json:"table"`
	Columns []string `json:"columns"`
	Rows    []Row    `json:"rows"`
}

type Row struct {
	Key    string `json:"key"`
	Values []any  `json:"values"`
}

// Step kinds.
const (
	StepDeliver      = "deliver"       // the broker hands a message to a worker
	StepSQL          = "sql"           // one handler statement ran
	StepBlocked      = "blocked"       // the worker waits on a lock: SQLite's busy handler holds its statement, or PostgreSQL makes it wait
	StepStop         = "stop"          // a guard stopped the handler (open transaction rolled back)
	StepFilterHit    = "filter-hit"    // the in-process filter knew the id
	StepAck          = "ack"           // the broker accepted the ack
	StepAckLost      = "ack-lost"      // the ack never reached the broker
	StepAckRefused   = "ack-refused"   // the lease had ended and the message was received again since: the late ack deletes nothing
	StepCrash        = "crash"         // the worker died (a rollback step follows if a transaction was open)
	StepRollback     = "rollback"      // an open transaction rolled back (crash, failure, a retry after SQLITE_BUSY or 40001)
	StepRestart      = "restart"       // the worker restarted (filter lost)
	StepAbort        = "abort"         // a statement failed; the handler gave up without acking
	StepLeaseExpired = "lease-expired" // a lease ran out
	StepDeadLetter   = "dead-letter"   // too many deliveries: not delivered again
	StepPrune        = "prune"         // the janitor deleted old dedupe rows
	StepClock        = "clock"         // the clock moved
	StepSkip         = "skip"          // the event could not happen now; Note says why
	StepNote         = "note"          // an explanation (e.g. the scheduler switched workers)
	StepProvider     = "provider"      // a CALL to the payment provider: a charge, or the first result replayed for its key
	StepEmail        = "email"         // a CALL to the email sender: every call sends
	StepBackoff      = "backoff"       // a failed copy is held back for its redelivery delay (backoff.go)
)

// Step is one thing that happened in one handler's run.
type Step struct {
	Index   int    `json:"index"` // 1-based; steps[i].index == i+1
	Event   int    `json:"event"`
	Tick    int64  `json:"tick"`
	Kind    string `json:"kind"`
	Worker  string `json:"worker,omitempty"` // "" for the broker; "janitor" for prune
	Message string `json:"message,omitempty"`
	Attempt int    `json:"attempt,omitempty"`
	// Copy is which broker record of Message the step concerns when the
	// producer published it more than once (2 for the second publish…);
	// 0 for the first copy.
	Copy         int      `json:"copy,omitempty"`
	Statement    int      `json:"statement,omitempty"` // 1-based statement of the handler section
	Line         int      `json:"line,omitempty"`      // line in the handler source
	SQL          string   `json:"sql,omitempty"`
	Args         []Arg    `json:"args,omitempty"`
	RowsAffected *int64   `json:"rows_affected,omitempty"` // writes
	RowsFound    *int64   `json:"rows_found,omitempty"`    // queries
	Error        string   `json:"error,omitempty"`
	SQLState     string   `json:"sql_state,omitempty"` // a PostgreSQL error's code ("23505"), from the driver's typed error; "" on SQLite
	Changes      []Change `json:"changes,omitempty"`   // rows this statement changed (pending inside a transaction)
	Reverted     []Change `json:"reverted,omitempty"`  // rows a rollback undid
	Note         string   `json:"note,omitempty"`
	// Effect: this step's commit changed a business figure (a balance, an
	// order's state, a shipment) on behalf of Message. Not in the JSON:
	// the changes say it.
	Effect bool `json:"-"`
	// applied: this step's commit put another application of Message's
	// effect in the ledger, by the per-message account (accounting.go): a
	// stale absolute balance written again changes a figure (Effect)
	// without applying anything twice. HandlerTrace.EffectSteps counts it.
	applied bool
}

// Arg is a bound parameter value.
type Arg struct {
	Name  string `json:"name"`
	Value any    `json:"value"`
}

// Change is one changed row. Pending means it belongs to an open
// transaction and other connections do not see it yet; Committed marks the
// rows a COMMIT (or an autocommit statement) made visible.
type Change struct {
	Table     string         `json:"table"`
	Key       string         `json:"key"`
	Op        string         `json:"op"` // insert, update, delete
	Before    map[string]any `json:"before,omitempty"`
	After     map[string]any `json:"after,omitempty"`
	Pending   bool           `json:"pending,omitempty"`
	Committed bool           `json:"committed,omitempty"`
}

// WriteTable prints the verdict table the CLI shows: handler, expected,
// actual, verdict, first divergence.
func (t *Trace) WriteTable(w io.Writer) error {
	var b strings.Builder
	fmt.Fprintf(&b, "scenario: %s (%s)\nscript:   %s\n\n", t.Scenario, t.Title, t.Script)
	tw := tabwriter.NewWriter(&b, 0, 0, 2, ' ', 0)
	fmt.Fprintln(tw, "HANDLER\tEXPECTED\tACTUAL\tVERDICT\tFIRST DIVERGENCE")
	for _, h := range t.Handlers {
		div := "-"
		if d := h.FirstDivergence; d != nil {
			div = fmt.Sprintf("step %d, event %d (%s): %s", d.Step, d.Event, d.EventText, d.Detail)
		}
		fmt.Fprintf(tw, "%s\t%s\t%s\t%s\t%s\n", h.Name, figures(h.Expected), figures(h.Actual), h.Verdict, div)
	}
	if err := tw.Flush(); err != nil {
		return err
	}
	_, err := io.WriteString(w, b.String())
	return err
}

func figures(fs []Figure) string {
	parts := make([]string, len(fs))
	for i, f := range fs {
		parts[i] = f.String()
	}
	return strings.Join(parts, " ")
}
