package playground

import (
	"database/sql/driver"
	"fmt"
	"math"
	"strconv"
	"strings"
)

// A partition scenario replaces the queue with a Kafka-style topic
// partition: records at offsets 0, 1, 2… (the scenario's messages, in
// order), read by one consumer of a consumer group at a time.
//
//   - The partition is assigned to the first worker when the run starts.
//     Before its first poll, and after every rebalance, the owner seeks:
//     it starts at the group's committed offset (offset 0 when the group
//     never committed, as auto.offset.reset=earliest does), or, for a
//     handler with @offsets stored, at next_offset in its own
//     consumer_offsets table, read with seekSQL on its connection.
//   - poll hands the owner the next batch (at most Partition.BatchSize
//     records, max.poll.records) from its position, and the owner runs its
//     handler on each record in offset order. A record has no ack; how the
//     owner keeps its place is the handler's @offsets style, named for what
//     real clients do:
//     auto-commit-poll is the Java KafkaConsumer's enable.auto.commit: the
//     commit runs inside poll() and covers the records that earlier polls
//     returned, so a loop that handles every record of a batch before it
//     polls again never commits one it has not handled (the Javadoc's
//     condition for at-least-once). The engine lets auto.commit.interval.ms
//     pass between batches: every poll first commits the owner's position.
//     franz-go's default autocommit commits the same offsets (what earlier
//     polls returned) from its timer. auto-commit-timer is a background
//     timer that commits everything handed to the application so far,
//     processed or not: librdkafka with its defaults (enable.auto.commit,
//     enable.auto.offset.store stores an offset as its message is handed
//     over, auto.commit.interval.ms) and franz-go with GreedyAutoCommit. Its
//     timer fires where the script places it, poll's timer-at OFFSET: just
//     before the handler runs on that record; it commits the end of the
//     batch, and a crash later in the batch then loses the records it did
//     not handle. Both auto-commit styles also commit the position when a
//     live owner's partition is revoked in a rebalance (the Java consumer
//     before it rejoins, librdkafka when it unassigns, franz-go's default
//     revoke under GreedyAutoCommit; franz-go's default mode commits only
//     the polls before the last one there, and so repeats the last batch).
//     commit-after (the default) commits the batch's end once every record
//     of it is handled; stored commits nothing to the group: the handler
//     writes next_offset in the transaction of the effect.
//   - crash-at N kills the owner just before it handles the record at
//     offset N. A dead owner owns nothing: the group reassigns the
//     partition on rebalance (after session.timeout.ms in Kafka). A
//     handler that fails ends the batch without a commit; the owner seeks
//     again before its next poll.
//
// The verdict's per-message account is the queue's, with one change: a
// record is still owed (in flight) while its offset is at or past the
// offset a new owner would start from (resumeOffset), and a record past
// it that never took effect is lost for good.
//
// Exactly once here means: each record's effect on this ledger happens
// once, because the effect and the offset commit in one transaction and the
// consumer reads its place from that same database. It says nothing of
// what a handler does outside it: an email or an HTTP call would be made
// again by a record that is handled again after a rolled-back transaction.

// Partition is a scenario's topic partition.
type Partition struct {
	Name      string `json:"name"`       // the topic partition, e.g. payments-0
	BatchSize int    `json:"batch_size"` // max.poll.records: the most records one poll hands over
}

// Offset styles: a handler's @offsets directive.
const (
	OffsetsAutoCommitPoll  = "auto-commit-poll"  // the Java consumer's commit inside poll() of what earlier polls returned
	OffsetsAutoCommitTimer = "auto-commit-timer" // a timer that commits everything handed out (librdkafka; franz-go's GreedyAutoCommit)
	OffsetsCommitAfter     = "commit-after"
	OffsetsStored          = "stored"
)

var offsetStyles = []string{OffsetsAutoCommitPoll, OffsetsAutoCommitTimer, OffsetsCommitAfter, OffsetsStored}

// autoCommitSplit is what a handler or @offsets directive that still says
// auto-commit is told: the one style it named was split in two, and the
// learner picks the client they mean.
const autoCommitSplit = "auto-commit is now two styles, named for what clients do: auto-commit-poll (the Java consumer: poll() commits what earlier polls returned, at least once when each batch is handled before the next poll) and auto-commit-timer (librdkafka's defaults, franz-go's GreedyAutoCommit: a timer commits what was handed out, processed or not)"

// checkOffsetStyle is the @offsets directive's argument check.
func checkOffsetStyle(arg string) error {
	if arg == "auto-commit" {
		return fmt.Errorf("@offsets %s", autoCommitSplit)
	}
	if !contains(offsetStyles, arg) {
		return fmt.Errorf("@offsets takes %s, not %q", strings.Join(offsetStyles, ", "), clip(arg))
	}
	return nil
}

// retiredHandlerHint says what became of a built-in handler name that old
// links may still carry; "" for a name that never was one.
func retiredHandlerHint(name string) string {
	if name == "auto-commit" {
		return "the auto-commit handler is now two handlers: " + strings.Replace(autoCommitSplit, "auto-commit is now two styles, named for what clients do: ", "", 1)
	}
	return ""
}

// autoCommits reports whether the style commits by itself, without the
// handler asking: the two auto-commit styles.
func autoCommits(style string) bool {
	return style == OffsetsAutoCommitPoll || style == OffsetsAutoCommitTimer
}

// Step kinds of a partition scenario.
const (
	StepPoll         = "poll"          // the owner fetched a batch of records
	StepOffsetCommit = "offset-commit" // the group's committed offset moved
	StepSeek         = "seek"          // the owner chose where to read from (a stored offset: SQL with it)
	StepRebalance    = "rebalance"     // the group assigned the partition to a consumer
	StepBatchDone    = "batch-done"    // the owner handled every record of its batch
)

// seekSQL is how a consumer with @offsets stored finds its place.
const seekSQL = "SELECT next_offset FROM consumer_offsets WHERE partition_id = :partition"

// PartitionFrame is the partition and its consumer group after an event.
type PartitionFrame struct {
	Name  string `json:"name"`
	Owner string `json:"owner,omitempty"` // the live consumer it is assigned to; "" after its owner died, until a rebalance
	// Position is the owner's next offset to fetch; nil until it seeks.
	Position *int64 `json:"position,omitempty"`
	// Committed is the group's committed offset; nil before any commit.
	Committed *int64 `json:"committed,omitempty"`
	// Stored is next_offset in consumer_offsets, for a handler with
	// @offsets stored (the offset it seeks to).
	Stored *int64 `json:"stored,omitempty"`
	End    int64  `json:"end"` // the log end: the partition holds offsets 0 to End-1
}

// partition is one handler's run of a partition scenario.
type partition struct {
	cfg       *Partition
	style     string
	owner     *worker // nil: no live consumer owns it
	last      *worker // the owner before the last one died
	position  int64   // the owner's next offset; -1 until it seeks
	committed int64   // -1: the group never committed
	offsets   map[string]int64
	handled   bool // finishJob saw the current record's handler complete
}

func newPartition(s *sim) *partition {
	if s.sc.Partition == nil {
		return nil
	}
	p := &partition{cfg: s.sc.Partition, style: s.h.Offsets, owner: s.workers[0], position: -1, committed: -1, offsets: map[string]int64{}}
	if p.style == "" {
		p.style = OffsetsCommitAfter
	}
	for i := range s.sc.Messages {
		p.offsets[s.sc.Messages[i].ID] = int64(i)
	}
	return p
}

// end is the log end offset.
func (p *partition) end(s *sim) int64 { return int64(len(s.sc.Messages)) }

// storedOffset is next_offset in the committed consumer_offsets row of the
// partition, if there is one.
func (s *sim) storedOffset() (int64, bool) {
	for _, v := range s.l.rows("consumer_offsets") {
		if valueText(v[0]) == s.part.cfg.Name {
			n, ok := v[1].(int64)
			return n, ok
		}
	}
	return 0, false
}

// resumeOffset is where a consumer newly assigned the partition starts.
func (s *sim) resumeOffset() int64 {
	p := s.part
	if p.style == OffsetsStored {
		if n, ok := s.storedOffset(); ok {
			return n
		}
	}
	return max(p.committed, 0)
}

// resumeText says where a new owner starts, and why.
func (s *sim) resumeText() string {
	p := s.part
	if p.style == OffsetsStored {
		if n, ok := s.storedOffset(); ok {
			return fmt.Sprintf("the offset stored in consumer_offsets is %d", n)
		}
	}
	if p.committed < 0 {
		return "the group has no committed offset (a new owner starts at 0)"
	}
	return fmt.Sprintf("the group's committed offset is %d", p.committed)
}

// owes reports whether the broker still owes a delivery of the message.
func (s *sim) owes(m *msgState) bool {
	if s.part == nil {
		return m.firstOwed() != nil
	}
	return s.part.offsets[m.m.ID] >= s.resumeOffset()
}

// lostDetail explains a message that settled without taking effect.
func (s *sim) lostDetail(id string) string {
	if s.part == nil {
		return id + " was acked but never applied"
	}
	return fmt.Sprintf("%s (offset %d) was never applied, and %s, past it: no consumer of the group reads it again", id, s.part.offsets[id], s.resumeText())
}

// owedWhy says why a delivered record is still owed.
func (p *partition) owedWhy(s *sim, id string) string {
	if p.owner != nil && p.owner.job != nil && p.owner.job.msg.m.ID == id {
		return id + " is still being handled by " + p.owner.name
	}
	return fmt.Sprintf("%s (offset %d) is still owed: %s, so the next consumer to read %s from there reads it again", id, p.offsets[id], s.resumeText(), p.cfg.Name)
}

// abortNote is the note of a step where a handler failed.
func (s *sim) abortNote(id string) string {
	if s.part != nil {
		return "the handler failed on " + id + ": the exception ends the batch"
	}
	return "the handler failed: no ack, so the broker delivers " + id + " again after its lease"
}

// partitionParam binds :offset and :partition; NULL in a queue scenario.
func (s *sim) partitionParam(name string, m *Message) any {
	if s.part == nil {
		return nil
	}
	if name == "offset" {
		return s.part.offsets[m.ID]
	}
	return s.part.cfg.Name
}

// partitionFrame is the partition after an event; nil for a queue.
func (s *sim) partitionFrame() *PartitionFrame {
	p := s.part
	if p == nil {
		return nil
	}
	f := &PartitionFrame{Name: p.cfg.Name, End: p.end(s)}
	if p.owner != nil {
		f.Owner = p.owner.name
		if p.position >= 0 {
			f.Position = ptr(p.position)
		}
	}
	if p.committed >= 0 {
		f.Committed = ptr(p.committed)
	}
	if n, ok := s.storedOffset(); ok && p.style == OffsetsStored {
		f.Stored = ptr(n)
	}
	return f
}

// partitionRefusal decides the events a partition changes: poll and
// rebalance need one; the queue's delivery events make no sense on one.
// ok is false when the queue's own rules decide.
func (s *sim) partitionRefusal(ev Event) (note string, ok bool) {
	p := s.part
	switch ev.Kind {
	case EventPoll, EventRebalance:
		if p == nil {
			return ev.Kind + " reads a partition, and this scenario's broker is a queue: try it in the partition-crash scenario", true
		}
	case EventDeliver, EventRedeliver, EventPublish, EventStart, EventRedrive, EventExpire, EventReplay:
		if p != nil {
			return fmt.Sprintf("%s is a partition: its owner reads records with poll, and rebalance moves it to another consumer; %s is for queues", p.cfg.Name, ev.Kind), true
		}
		return "", false
	default:
		return "", false
	}
	if ev.Kind == EventPoll {
		switch {
		case p.owner == nil:
			return fmt.Sprintf("no live consumer owns %s: its owner crashed; rebalance assigns it to another (rebalance to B)", p.cfg.Name), true
		case p.owner.job != nil:
			return p.owner.name + " is still handling " + p.owner.job.msg.m.ID, true
		}
		at := p.position
		if at < 0 {
			at = s.resumeOffset()
		}
		if at >= p.end(s) {
			return fmt.Sprintf("%s has read %s to its end (offset %d): there is nothing new to poll", p.owner.name, p.cfg.Name, p.end(s)), true
		}
	}
	return "", true
}

// poll hands the owner its next batch and runs the handler on each record.
func (s *sim) poll(ev Event) error {
	p, w := s.part, s.part.owner
	if p.position < 0 {
		if err := s.seek(w); err != nil {
			return err
		}
	}
	from := p.position
	if p.style == OffsetsAutoCommitPoll && from > p.committed && from > 0 {
		s.commitOffset(w, from, fmt.Sprintf("auto-commit-poll: %s's poll() first commits offset %d, past the records earlier polls returned, all of them handled (the Java consumer's enable.auto.commit commits inside poll(); franz-go's default autocommit commits the same offsets from its timer)", w.name, from))
	}
	end := min(from+int64(p.cfg.BatchSize), p.end(s))
	ids := make([]string, 0, end-from)
	for off := from; off < end; off++ {
		ids = append(ids, s.sc.Messages[off].ID)
		s.delivered[s.sc.Messages[off].ID] = true // handed to the consumer, handled or not
	}
	s.record(Step{Kind: StepPoll, Worker: w.name, Note: fmt.Sprintf("%s polls %s from offset %d and receives %s (max.poll.records is %d)",
		w.name, p.cfg.Name, from, strings.Join(ids, ", "), p.cfg.BatchSize)})
	p.position = end
	for off := from; off < end; off++ {
		m := &s.sc.Messages[off]
		st := s.msgs[m.ID]
		c := st.firstOwed()
		if c == nil {
			c = st.newCopy()
		}
		c.deliveries++
		c.leaseEnd = math.MaxInt64 // records have no lease: advance never expires one
		stmts, ok := s.h.statementsFor(m.Kind)
		note := fmt.Sprintf("offset %d", off)
		if !ok {
			note += "; the handler has no statements for kind " + m.Kind
		}
		w.job = &job{msg: c, attempt: c.deliveries, stmts: stmts, leaseEnd: c.leaseEnd, batch: true}
		s.record(Step{Kind: StepDeliver, Worker: w.name, Message: m.ID, Attempt: c.deliveries, Note: note})
		if ev.Timer && ev.TimerAt == off {
			s.timerFires(w, from, off, end)
		}
		if ev.Fault == FaultCrashAt && ev.N == off {
			return s.crash(w, StepCrash, fmt.Sprintf("crash-at %d: %s dies before its handler runs on %s", off, w.name, m.ID))
		}
		p.handled = false
		if err := s.over(); err != nil {
			return err
		}
		if err := s.runToCompletion(w); err != nil {
			return err
		}
		if w.job != nil {
			return s.crash(w, StepCrash, w.name+" could not finish "+m.ID+": it leaves the group")
		}
		if !p.handled {
			p.position = -1
			s.record(Step{Kind: StepNote, Worker: w.name, Message: m.ID,
				Note: fmt.Sprintf("%s's batch ends at offset %d without a commit; %s seeks again before its next poll", w.name, off, w.name)})
			return nil
		}
	}
	if ev.Timer && (ev.TimerAt < from || ev.TimerAt >= end) {
		s.record(Step{Kind: StepNote, Worker: w.name, Note: fmt.Sprintf("timer-at %d did not fire: the batch held offsets %d to %d", ev.TimerAt, from, end-1)})
	}
	if ev.Fault == FaultCrashAt {
		s.record(Step{Kind: StepNote, Worker: w.name, Note: fmt.Sprintf("crash-at %d did not fire: the batch held offsets %d to %d", ev.N, from, end-1)})
	}
	done := Step{Kind: StepBatchDone, Worker: w.name, Note: fmt.Sprintf("%s has handled the batch; its position is %d", w.name, end)}
	switch p.style {
	case OffsetsAutoCommitPoll:
		done.Note += "; its next poll() commits it"
	case OffsetsAutoCommitTimer:
		if p.committed < end {
			done.Note += "; its auto-commit timer commits it when it next fires (timer-at places it inside a batch)"
		}
	case OffsetsStored:
		done.Note += "; it commits nothing to the group: each record's next offset went into consumer_offsets in the transaction of its effect"
	}
	s.record(done)
	if p.style == OffsetsCommitAfter {
		s.commitOffset(w, end, fmt.Sprintf("%s commits offset %d after processing the batch", w.name, end))
	}
	return nil
}

// timerFires plays an auto-commit timer that goes off while w is about to
// handle the record at offset at, in the batch from to end-1.
func (s *sim) timerFires(w *worker, from, at, end int64) {
	p := s.part
	switch p.style {
	case OffsetsAutoCommitTimer:
		s.commitOffset(w, end, fmt.Sprintf("timer-at %d: %s's auto-commit timer fires and commits offset %d, past every record handed to %s, though %s", at, w.name, end, w.name, unhandledText(s, at, end)))
	case OffsetsAutoCommitPoll:
		if from > p.committed && from > 0 { // not reached: the poll committed them
			s.commitOffset(w, from, fmt.Sprintf("timer-at %d: %s's auto-commit commits offset %d, past the records earlier polls returned", at, w.name, from))
			return
		}
		why := "no earlier poll returned a record since " + w.name + " took " + p.cfg.Name
		if p.committed > 0 {
			why = fmt.Sprintf("those (up to offset %d) are committed already", p.committed)
		}
		s.record(Step{Kind: StepNote, Worker: w.name, Note: fmt.Sprintf("timer-at %d: auto-commit-poll commits only the records earlier polls returned, and %s: nothing %s has not handled is committed", at, why, w.name)})
	default:
		s.record(Step{Kind: StepNote, Worker: w.name, Note: fmt.Sprintf("timer-at %d: %s's consumer has no auto-commit (@offsets %s): the timer commits nothing", at, w.name, p.style)})
	}
}

// unhandledText names the records from at to end-1 that the owner has not
// handled yet: "it has not handled rec-1, rec-2 yet".
func unhandledText(s *sim, at, end int64) string {
	ids := make([]string, 0, end-at)
	for off := at; off < end; off++ {
		ids = append(ids, s.sc.Messages[off].ID)
	}
	return "it has not handled " + strings.Join(ids, ", ") + " yet"
}

// commitOffset moves the group's committed offset.
func (s *sim) commitOffset(w *worker, off int64, note string) {
	s.part.committed = off
	s.record(Step{Kind: StepOffsetCommit, Worker: w.name, Note: note})
}

// seek sets a newly assigned owner's position, recording where and why.
func (s *sim) seek(w *worker) error {
	p := s.part
	st := Step{Kind: StepSeek, Worker: w.name}
	if p.style == OffsetsStored {
		n, found, err := s.readStoredOffset(w, &st)
		if err != nil {
			return err
		}
		if found {
			p.position = n
			st.Note = fmt.Sprintf("%s seeks to offset %d, the next_offset in consumer_offsets, which its handler moves in the transaction of each effect (it does not ask the group for a committed offset)", w.name, n)
			s.record(st)
			return nil
		}
	}
	p.position = max(p.committed, 0)
	if p.committed < 0 {
		st.Note = fmt.Sprintf("the group has no committed offset for %s: %s starts at offset 0 (auto.offset.reset=earliest)", p.cfg.Name, w.name)
	} else {
		st.Note = fmt.Sprintf("%s starts at offset %d, the group's committed offset for %s", w.name, p.committed, p.cfg.Name)
	}
	if st.SQL != "" {
		st.Note = "no stored offset: " + st.Note
	}
	s.record(st)
	return nil
}

// readStoredOffset runs seekSQL on w's connection (SQLite or PostgreSQL),
// recording it in the step. No transaction is open while an owner seeks,
// so the row it read is the committed row the engine mirrors: the value
// comes from there.
func (s *sim) readStoredOffset(w *worker, st *Step) (int64, bool, error) {
	if w.db == nil {
		db, err := s.l.conn(w.name)
		if err != nil {
			return 0, false, err
		}
		w.db = db
	}
	st.SQL, st.Args = seekSQL, []Arg{{Name: "partition", Value: s.part.cfg.Name}}
	res := w.db.exec(s.ctx, seekSQL, []driver.NamedValue{{Name: "partition", Ordinal: 1, Value: s.part.cfg.Name}}, true)
	if res.Err != nil {
		st.Error = res.Err.Error()
		st.SQLState = pgSQLState(res.Err)
		return 0, false, nil
	}
	st.RowsFound = ptr(res.Found)
	n, ok := s.storedOffset()
	return n, ok && res.Found > 0, nil
}

// rebalance assigns the partition to a consumer, which seeks.
func (s *sim) rebalance(ev Event) error {
	p := s.part
	prev := p.owner
	var to *worker
	if ev.Worker != "" {
		to = s.byName[ev.Worker]
	} else {
		from := prev
		if from == nil {
			from = p.last
		}
		to = s.workers[0]
		for i, w := range s.workers {
			if w == from {
				to = s.workers[(i+1)%len(s.workers)]
			}
		}
	}
	var note string
	switch {
	case prev == nil && to == p.last:
		note = fmt.Sprintf("%s restarts and rejoins the group, which assigns it %s again", to.name, p.cfg.Name)
	case prev == nil:
		note = fmt.Sprintf("%s's session timed out (session.timeout.ms): the group rebalances and assigns %s to %s", p.last.name, p.cfg.Name, to.name)
	case prev == to:
		note = fmt.Sprintf("the group rebalances and %s keeps %s", to.name, p.cfg.Name)
	default:
		note = fmt.Sprintf("the group rebalances: %s is revoked from %s and assigned to %s", p.cfg.Name, prev.name, to.name)
	}
	s.record(Step{Kind: StepRebalance, Worker: to.name, Note: note})
	if prev != nil && autoCommits(p.style) && p.position > p.committed && p.position > 0 {
		who := "the Java consumer commits before it rejoins the group"
		if p.style == OffsetsAutoCommitTimer {
			who = "librdkafka commits the partitions it unassigns; franz-go's default revoke commits everything polled under GreedyAutoCommit"
		}
		s.commitOffset(prev, p.position, fmt.Sprintf("%s commits offset %d as %s is revoked: with auto-commit on, a consumer commits its position before it gives a partition up (%s)", prev.name, p.position, p.cfg.Name, who))
	}
	p.owner, p.position = to, -1
	return s.seek(to)
}

// partitionWorkerDied: a crashed owner owns nothing; a restarted one
// forgets its position and seeks again.
func (s *sim) partitionWorkerDied(w *worker, kind string) {
	p := s.part
	if p.owner != w {
		return
	}
	p.position = -1
	if kind == StepRestart {
		return
	}
	p.owner, p.last = nil, w
	s.record(Step{Kind: StepNote, Worker: w.name, Note: fmt.Sprintf("%s owns %s no longer: the group reassigns it when %s's session times out (rebalance)", w.name, p.cfg.Name, w.name)})
}

// checkPartitionEvent rejects a crash-at outside the scenario's partition.
func (sc *Scenario) checkPartitionEvent(n int, ev Event) error {
	if ev.Kind != EventPoll || sc.Partition == nil {
		return nil
	}
	if ev.Timer && ev.TimerAt >= int64(len(sc.Messages)) {
		return &InputError{Field: "script", Msg: fmt.Sprintf("event %d: timer-at %d: %s holds offsets 0 to %d", n, ev.TimerAt, sc.Partition.Name, len(sc.Messages)-1)}
	}
	if ev.Fault == FaultCrashAt && ev.N >= int64(len(sc.Messages)) {
		return &InputError{Field: "script", Msg: fmt.Sprintf("event %d: crash-at %d: %s holds offsets 0 to %d", n, ev.N, sc.Partition.Name, len(sc.Messages)-1)}
	}
	return nil
}

// parsePartitionEvent parses the words after poll or rebalance:
//
//	poll [timer-at OFFSET] [crash-at OFFSET]
//	rebalance [to W]
func parsePartitionEvent(ev *Event, args []string) ([]string, error) {
	if len(args) == 0 {
		return args, nil
	}
	if ev.Kind == EventPoll {
		for i := 0; len(args) > 0; i++ {
			word := args[0]
			switch {
			case word != FaultCrashAt && word != PollTimerAt && i == 0:
				return args, fmt.Errorf("unexpected %q after poll; expected timer-at OFFSET, crash-at OFFSET, or both", clip(word))
			case word != FaultCrashAt && word != PollTimerAt:
				return args, nil // the caller names what is left over
			case word == FaultCrashAt && ev.Fault != "" || word == PollTimerAt && ev.Timer:
				return args, fmt.Errorf("poll takes %s once", word)
			}
			if len(args) < 2 {
				return args, fmt.Errorf("%s needs an offset, e.g. %s 2", word, word)
			}
			n, err := parseCount(word, args[1], 0, MaxMessages-1)
			if err != nil {
				return args, err
			}
			if word == FaultCrashAt {
				ev.Fault, ev.N = FaultCrashAt, n
			} else {
				ev.Timer, ev.TimerAt = true, n
			}
			args = args[2:]
		}
		return args, nil
	}
	if args[0] != "to" || len(args) < 2 {
		return args, fmt.Errorf("rebalance takes an optional to W, e.g. rebalance to B")
	}
	if err := checkName("worker", args[1]); err != nil {
		return args, err
	}
	ev.Worker = args[1]
	return args[2:], nil
}

// appendPartitionText appends the words after poll or rebalance.
func (e Event) appendPartitionText(b []byte) []byte {
	if e.Kind == EventPoll && e.Timer {
		b = strconv.AppendInt(append(b, " timer-at "...), e.TimerAt, 10)
	}
	if e.Kind == EventPoll && e.Fault == FaultCrashAt {
		b = strconv.AppendInt(append(b, " crash-at "...), e.N, 10)
	}
	if e.Kind == EventRebalance && e.Worker != "" {
		b = append(append(b, " to "...), e.Worker...)
	}
	return b
}
