// Package playground is Idemlab's simulation engine: a broker that delivers
// messages at least once, workers that run handler scripts as real SQL on
// modernc.org/sqlite, the faults a learner injects, and a trace with a
// verdict per handler. It knows nothing about HTTP or HTML.
//
// # Running
//
// A run is a pure function of (scenario, handlers, script, seed):
//
//	tr, err := playground.Run(ctx, playground.Request{
//		Scenario: "lost-ack",
//		Handlers: []string{"increment", "dedupe-tx"},
//		Script:   "deliver msg-1 lose-ack; deliver msg-2; redeliver msg-1",
//	})
//
// Bad input (unknown scenario or handler, a script or handler that does not
// parse, a request over a limit) is an *InputError whose Error() reads
// "script: event 3: unknown worker C; workers are A, B". Anything else is an
// internal error or the context's error. Encoding the Trace with
// encoding/json gives byte-identical output for identical requests.
//
// # The model
//
// Each handler gets its own ledger: a real SQLite database file in WAL mode
// (walfile.go), in a directory private to the process on tmpfs (/dev/shm),
// written from the scenario's template image, whose bytes are then read and
// written in memory (memvfs.go); when the run ends it is reset
// to the template's rows and kept open for the next run (pool.go, which
// proves a reset ledger fresh), and removed when it has been idle a while.
// Tables:
//
//	accounts(id TEXT PRIMARY KEY, balance INTEGER)
//	orders(id TEXT PRIMARY KEY, state TEXT, shipped_at INTEGER)
//	shipments(order_id TEXT, message_id TEXT, shipped_at INTEGER)
//	processed_messages(message_id TEXT PRIMARY KEY, processed_at INTEGER)
//	consumer_offsets(partition_id TEXT PRIMARY KEY, next_offset INTEGER)  (shown in partition scenarios only)
//
// Each worker has its own connection with busy_timeout=0, opened on first
// use; the first worker that needs one gets the pinned connection (it is
// never closed before the run ends, whatever happens to that worker), the
// janitor that prunes gets its own on the first prune. Statements run one
// at a time, synchronously, on the caller's goroutine: there are no
// goroutines per worker. Locking is SQLite's own, in WAL mode: a read never
// waits and sees the last committed state (inside a transaction, the state
// when the transaction first read); one connection writes at a time; BEGIN
// IMMEDIATE takes the write lock at once. When a statement meets
// SQLITE_BUSY, its note says why:
//
//   - outside a transaction, or in one that has not read yet, SQLite's busy
//     handler holds the statement until the writer's transaction ends: the
//     worker waits, and the statement runs when the lock is free;
//   - in a transaction that has read, SQLite does not wait: the statement
//     fails with SQLITE_BUSY (5), or SQLITE_BUSY_SNAPSHOT (517) once the
//     writer has committed, and the error reaches the handler, as a real
//     driver hands it to the application. The handler fails (no ack) unless
//     it declares @retry-on busy (or conflict), which rolls back and runs
//     the transaction again from its BEGIN (retry.go), as PostgreSQL's
//     40001 does with @retry-on serialization_failure;
//   - during "step W" nothing else runs; the learner decides what runs next;
//     during deliver, redeliver, publish, replay and "finish W" the
//     scheduler steps another worker that has a message in hand (workers not
//     blocked first, in worker order; with a non-zero seed the order is
//     rotated by a PCG generator seeded with (seed, handler index), so the
//     seed matters when two or more workers could run), then retries.
//
// TestLocking_DifferentialAgainstWALFiles runs random interleavings through
// the engine and again, statement by statement, on real WAL database
// files, and compares every outcome.
//
// The clock is in ticks (Scenario.TickUnit says what a tick stands for) and
// only moves on "advance T" and when a redelivery waits for a lease (or a
// backoff) to end;
// statements take no time, so every handler sees the same clock. A delivery
// leases the message for Settings.LeaseTicks; an ack after the lease ended
// (or after "expire") is refused, and the broker may deliver the message
// again. After Settings.MaxDeliveries deliveries of one copy the message is
// dead-lettered. With Settings.Backoff (backoff.go) a failed handler gives
// the copy back at once and the broker holds it back for a delay that grows
// with its failed deliveries (immediate, fixed, exponential up to a cap,
// with seeded jitter); a lapsed lease adds the same delay after its end,
// and a delivery of a copy still held back first moves the clock to the
// end of its delay.
//
// Each publish (and each message a replay sends again) is a broker record
// of its own, a copy, as a retried webhook is: its own deliveries, lease
// and ack, so acking one copy does not delete another. deliver, start and
// redeliver act on the oldest copy still owed that no worker holds (else
// the oldest owed one); a second delivery of a copy still leased ("the
// broker hands out a second copy") is the same record, and either ack
// deletes it. Steps name the copy (Step.Copy) from the second one on. A
// message id is settled when every copy is; its effect is expected once
// however many copies there were.
//
// Runtime impossibilities (redeliver an acked message, step an idle worker,
// deliver to a busy worker) are recorded as "skip" steps with a note, never
// errors.
//
// # Script grammar
//
// Events are separated by ";" or newlines; "#" starts a comment to the end
// of the line; keywords are lowercase. Canonical printing joins events with
// "; ", and ParseScript(s.String()) gives back the same events.
//
//	deliver MSG [to W] [FAULT]    lease MSG to W (default: the first idle worker); W runs its handler to the end and acks
//	redeliver MSG [to W] [FAULT]  deliver MSG again; the clock jumps to the end of its lease if it is still running
//	publish MSG [to W] [FAULT]    the producer sends MSG again: a new copy (same id, its own lease and ack) is delivered
//	redrive MSG [to W] [FAULT]    an operator moves MSG's dead-lettered copy back to the queue: delivered again, its count of deliveries starting over
//	FAULT := lose-ack | crash-before-ack | crash-after N
//	start MSG on W                W receives MSG and waits for step
//	step W [N]                    W runs its next N statements (default 1); the step after the last statement is the ack
//	finish W                      W runs the rest of its handler and acks
//	crash W                       W dies: open transaction rolled back, no ack, in-process filter lost
//	expire MSG                    MSG's lease runs out now; a running worker's later ack is refused
//	restart W                     W restarts: in-process filter lost (a running handler dies as in crash)
//	replay                        every message published so far is delivered again, in order, to the first idle worker, each as a new copy
//	prune [older-than T]          delete processed_messages rows older than T ticks (default Settings.RetentionTicks)
//	advance T                     the clock moves T ticks on
//	poll [timer-at OFFSET] [crash-at OFFSET]
//	                              partition scenarios: the partition's owner fetches its next batch and handles each record;
//	                              timer-at fires an auto-commit timer just before its handler runs on the record at OFFSET;
//	                              crash-at kills it just before its handler runs on the record at OFFSET
//	rebalance [to W]              partition scenarios: the group assigns the partition to W (default: the next worker), which seeks
//
// A partition scenario (Scenario.Partition) has no queue: its messages are
// the records at offsets 0, 1, 2… of one partition, read with poll and
// rebalance; deliver, redeliver, publish, start, expire, redrive and replay
// are skipped there, as poll and rebalance are in a queue scenario. How the
// owner keeps its place (the handler's @offsets), what a seek reads, and
// when a record counts as owed or lost are in offsets.go.
//
// Limits: MaxScriptBytes, MaxScriptEvents, MaxHandlers per run, MaxWorkers
// and MaxMessages per scenario. Over a limit is an InputError.
//
// # Handler scripts
//
// A handler is a short text: directives on lines starting with "@", SQL
// statements each ending with ";" at the end of a line (a statement may span
// lines), "--" comments. One statement is one step: a crash point and a place
// where the scheduler may switch workers.
//
//	-- dedupe-tx
//	@description Records the id and applies the effect in one transaction.
//	@idempotent yes
//	@why The id row and the effect commit or roll back together.
//	@on credit
//	BEGIN;
//	INSERT INTO processed_messages(message_id, processed_at)
//	  VALUES (:message_id, :now) ON CONFLICT DO NOTHING;
//	@stop-if-no-rows
//	UPDATE accounts SET balance = balance + :amount WHERE id = :account_id;
//	COMMIT;
//	@on ship
//	…
//
// Directives:
//
//	@description TEXT   one line shown in lists
//	@idempotent yes|no  and @why TEXT: the claim and its reason
//	@filter             keep an in-process set of ids per worker: a known id skips straight to the ack;
//	                    the id is added when the handler completes; crash and restart empty the set
//	@on KIND            the statements that follow handle messages of KIND (credit, ship, price);
//	                    statements before any @on handle every kind without a section of its own
//	@stop-if-no-rows    after INSERT/UPDATE/DELETE: if it changed no rows, stop and ack
//	@stop-if-found      after SELECT: if it returned a row, stop and ack
//	@continue-on-error  after SELECT/INSERT/UPDATE/DELETE: if it fails, catch the error and go on;
//	                    on PostgreSQL the transaction is then aborted (25P02; COMMIT answers ROLLBACK)
//	@retry-on WORD…     a transaction that fails with one of the named errors rolls back and runs
//	                    again from its BEGIN, at most 5 times per delivery (else: the handler fails,
//	                    no ack): busy is SQLite's SQLITE_BUSY and SQLITE_BUSY_SNAPSHOT,
//	                    serialization_failure PostgreSQL's 40001 and 40P01, conflict all four (retry.go)
//	@offsets STYLE      in a partition scenario: auto-commit-poll (the Java consumer: each poll commits what
//	                    earlier polls returned), auto-commit-timer (a timer, placed by poll's timer-at, commits
//	                    everything handed out: librdkafka, franz-go's GreedyAutoCommit), commit-after (commit
//	                    once the batch is handled; the default) or stored (commit nothing to the group, seek to
//	                    next_offset in consumer_offsets); elsewhere it changes nothing
//
// Stopping rolls back an open transaction. Statements may be SELECT, INSERT,
// UPDATE, DELETE, REPLACE, BEGIN, COMMIT (END) and ROLLBACK; a section must
// close every transaction it opens. Parameters, bound from the message:
// :message_id, :amount, :balance (the balance after this credit when every
// message is applied once, in publish order: what a producer of absolute
// values would send), :account_id, :order_id (NULL when the message has
// none), :payment_id (a credit's business key: the payment it carries, its
// message id when it names none; NULL for a ship message), :sku, :price and
// :version (a price change's product, new price and producer-assigned
// version; NULL for other kinds), :now (the clock), and in a partition
// scenario :offset (the record's offset) and :partition (the partition's
// name), NULL elsewhere. Each statement is prepared against the schema
// when the handler is parsed, so errors name the line:
// "handler: handler mine, line 4: unknown parameter :amout; parameters are …".
// A statement that fails at run time (say a UNIQUE violation) aborts the
// handler without an ack, as an exception in a real consumer would, unless
// it carries @continue-on-error (pgabort.go).
//
// A learner's handler runs on connections with an SQLite authorizer: row
// reads and writes and transactions only, no ATTACH, PRAGMA, DDL or
// recursive queries, and only the functions in sandboxFunctions (abs,
// coalesce, max, count, …); the parser checks each statement against the
// same authorizer (sandboxAuthorizer, sandbox.go). The built-in handlers are
// trusted and run without it.
//
// PostgreSQL ledgers (Request.Ledger, pgledger.go): the same engine runs a
// handler on a schema of a PostgreSQL server at READ COMMITTED, REPEATABLE
// READ or SERIALIZABLE. Each worker is a real session; a statement that
// waits on a lock is a "blocked" step naming the transaction it waits on
// (pg_blocking_pids), and it resolves as PostgreSQL resolves it (0 rows,
// 23505, 40001, 40P01) when the scheduler has run the others. A learner's
// handler for PostgreSQL is parsed with ParseHandlerFor: SQLite-only syntax
// is an error with PostgreSQL's way as a hint, and statements may name only
// the ledger tables and a short list of functions; the schema's role has
// privileges on those six tables and nothing else.
//
// # Verdict
//
// The expected ledger applies every message delivered so far exactly once,
// in publish order, to the initial ledger (credit: balance += amount; ship:
// state 'shipped' and one shipment). Two credits that carry one payment
// (Message.PaymentID: a producer that published it again under a new
// message id, as a Pub/Sub publisher's retry does) are one business event:
// the payment is expected once, and a second application by either message
// is a duplicate-effect ("payment pay-7 applied 2 times: msg-1 and msg-2
// carry it"). The producer-retry scenario plays it: dedupe-tx, keyed on the
// message id, applies it twice; dedupe-key, keyed on the payment id, once. Figures are an account's balance, and an
// order's state with its number of shipments as value. A handler is ok when
// its final committed figures equal the expected ones. Otherwise the
// verdict is duplicate-effect when the first differing figure is above the
// expected value, lost-effect when it is below (or the state is wrong), and
// the violations explain it per message: a message whose effect committed
// more than once (a commit that changed a balance, a state or a shipment) is
// a duplicate-effect at the step of its second effective commit; a delivered
// message that never took effect is a lost-effect at the step where the
// handler skipped it; an effect overwritten by a stale write is a lost-effect
// of the newest message on that figure. first_divergence is the earliest
// violation.
//
// # Trace schema
//
// Top level (abridged; steps[].index and events[].index are 1-based, and
// every "step"/"event" field refers to them):
//
//	{
//	  "scenario": "lost-ack", "title": "…", "script": "deliver msg-1 lose-ack; deliver msg-2; redeliver msg-1",
//	  "seed": 0, "tick_unit": "second",
//	  "settings": {"lease_ticks": 30, "max_deliveries": 5, "retention_ticks": 3600, "workers": 2},
//	  "workers": ["A", "B"],
//	  "messages": [{"id": "msg-1", "kind": "credit", "account_id": "acc-1", "amount": 50, "balance": 150}, …],
//	  "events": [{"index": 1, "text": "deliver msg-1 lose-ack", "kind": "deliver", "message": "msg-1", "tick": 0}, …],
//	  "handlers": [{
//	    "name": "increment", "description": "…", "idempotent": false, "why": "…",
//	    "ok": false, "verdict": "duplicate-effect",
//	    "violations": [{"kind": "duplicate-effect", "message_id": "msg-1", "step": 10, "event": 3, "detail": "msg-1 applied 2 times"}],
//	    "first_divergence": {"step": 10, "event": 3, "event_text": "redeliver msg-1", "message_id": "msg-1", "kind": "duplicate-effect", "detail": "…"},
//	    "expected": [{"table": "accounts", "key": "acc-1", "value": 170}],
//	    "actual":   [{"table": "accounts", "key": "acc-1", "value": 220}],
//	    "ledger": [{"table": "accounts", "columns": ["id", "balance"], "rows": [{"key": "acc-1", "values": ["acc-1", 220]}]}, …],
//	    "frames": [{"event": 1, "tick": 0, "first_step": 1, "step_count": 3,
//	                "expected": […], "actual": […], "ledger": […], "changed": ["accounts/acc-1"]}, …],
//	    "steps": [
//	      {"index": 1, "event": 1, "tick": 0, "kind": "deliver", "worker": "A", "message": "msg-1", "attempt": 1},
//	      {"index": 2, "event": 1, "tick": 0, "kind": "sql", "worker": "A", "message": "msg-1", "attempt": 1,
//	       "statement": 1, "line": 7, "sql": "UPDATE accounts SET balance = balance + :amount WHERE id = :account_id",
//	       "args": [{"name": "amount", "value": 50}, {"name": "account_id", "value": "acc-1"}],
//	       "rows_affected": 1,
//	       "changes": [{"table": "accounts", "key": "acc-1", "op": "update",
//	                    "before": {"balance": 100, "id": "acc-1"}, "after": {"balance": 150, "id": "acc-1"},
//	                    "committed": true}]},
//	      {"index": 3, "event": 1, "tick": 0, "kind": "ack-lost", "worker": "A", "message": "msg-1", "attempt": 1, "note": "…"},
//	      …]
//	  }, …]
//	}
//
// Frames (one per event, per handler) hold what the UI draws after each
// event: the committed ledger, the figures expected and actual (the chart),
// the rows whose committed values changed during the event, and the range
// of steps the event produced (the sequence diagram). Step kinds are the
// Step* constants: deliver, sql, blocked, stop, filter-hit, ack, ack-lost,
// ack-refused, crash, rollback, restart, abort, lease-expired,
// dead-letter, prune, clock, skip, note; in a partition scenario also
// poll, seek, offset-commit, rebalance and batch-done. A step's changes are the rows its
// statement changed; inside a transaction they are "pending" (invisible to
// other connections) until the COMMIT step lists them as "committed";
// "reverted" lists what a rollback undid. rows_affected is set for writes,
// rows_found for queries; error holds SQLite's message (e.g. "database is
// locked (5) (SQLITE_BUSY)" on a blocked step).
package playground
