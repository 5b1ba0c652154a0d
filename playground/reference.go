package playground

import (
	"strings"
)

// HandlerReference is what a handler script may use, for a learner's
// reference panel: the tables with their columns, the parameters and the
// directives, each with one example. It is built from the definitions the
// parser and the ledger use (schemaSQL, tableColumns, handlerParams,
// handlerDirectives), and a test parses every example, so it cannot drift
// from what the engine accepts.
type HandlerReference struct {
	Tables     []TableReference
	Params     []ParamReference
	Directives []DirectiveReference
	Calls      []CallReference
}

// CallReference is a CALL statement to a system outside the database
// (provider.go), with what it does and a handler that uses it.
type CallReference struct {
	Name    string // "provider.charge"
	Usage   string // "CALL provider.charge(:amount, key => :payment_id)"
	Meaning string
	Example string // a whole handler script that parses
}

// TableReference is one ledger table: its columns and its CREATE TABLE.
type TableReference struct {
	Name    string
	Columns []string
	Schema  string // the CREATE TABLE statement every run starts from
}

// ParamReference is a parameter a statement may use (":amount").
type ParamReference struct {
	Name    string // without ':'
	Meaning string
}

// DirectiveReference is a directive with what it does and a handler that
// uses it.
type DirectiveReference struct {
	Name    string // without '@', e.g. "stop-if-no-rows"
	Usage   string // "@on KIND"
	Meaning string
	Example string // a whole handler script that parses
}

// paramMeanings says what each of handlerParams is bound to (see bind).
var paramMeanings = map[string]string{
	"message_id": "the message's id, the same on every copy",
	"amount":     "a credit's amount",
	"balance":    "the balance after this credit when every message is applied once, in publish order: the absolute value a producer would send",
	"account_id": "the account a credit is for (NULL for other kinds)",
	"order_id":   "the order a ship message is for (NULL for other kinds)",
	"now":        "the clock, in ticks",
	"sku":        "the product a price change is for (NULL for other kinds)",
	"price":      "a price change's new price, an absolute value (NULL for other kinds)",
	"version":    "a price change's version, set by the producer and one higher for each change of the product (NULL for other kinds)",
	"payment_id": "a credit's business key: the payment it carries (its message id when it names none); NULL for a ship message",
	"offset":     "in a partition scenario, the record's offset in the partition (0, 1, 2…); NULL in a queue scenario",
	"partition":  "in a partition scenario, the partition's name (payments-0); NULL in a queue scenario",
}

// handlerDirectives are the directives the parser knows, in the order the
// reference lists them; the parser's unknown-directive message names them.
var handlerDirectives = []DirectiveReference{
	{Name: "on", Usage: "@on KIND", Meaning: "the statements that follow handle messages of KIND (" + strings.Join(messageKinds, ", ") + "); statements before any @on handle every kind without a section of its own",
		Example: "@on credit\nUPDATE accounts SET balance = balance + :amount WHERE id = :account_id;\n\n@on ship\nUPDATE orders SET state = 'shipped' WHERE id = :order_id;"},
	{Name: GuardStopIfNoRows, Usage: "@" + GuardStopIfNoRows, Meaning: "after an INSERT, UPDATE, DELETE or REPLACE: if it changed no rows, stop (rolling back an open transaction) and ack",
		Example: "BEGIN;\nINSERT INTO processed_messages(message_id, processed_at) VALUES (:message_id, :now) ON CONFLICT DO NOTHING;\n@stop-if-no-rows\nUPDATE accounts SET balance = balance + :amount WHERE id = :account_id;\nCOMMIT;"},
	{Name: GuardStopIfFound, Usage: "@" + GuardStopIfFound, Meaning: "after a SELECT: if it returned a row, stop (rolling back an open transaction) and ack",
		Example: "SELECT 1 FROM processed_messages WHERE message_id = :message_id;\n@stop-if-found\nUPDATE accounts SET balance = balance + :amount WHERE id = :account_id;"},
	{Name: directiveContinueOnError, Usage: "@" + directiveContinueOnError, Meaning: "after a SELECT, INSERT, UPDATE, DELETE or REPLACE: if it fails, the consumer catches the error and goes on to the next statement. On SQLite the failed statement alone is undone and the transaction goes on; on PostgreSQL the transaction is aborted: every later statement fails with 25P02 and its COMMIT answers ROLLBACK, which fails the handler (no ack)",
		Example: "BEGIN;\nUPDATE accounts SET balance = balance + :amount WHERE id = :account_id;\nINSERT INTO processed_messages(message_id, processed_at) VALUES (:message_id, :now);\n@continue-on-error\nCOMMIT;"},
	{Name: "filter", Usage: "@filter", Meaning: "keep an in-process set of ids per worker: a known id skips straight to the ack; an id is added when the handler completes; a crash or restart empties the set",
		Example: "@filter\nUPDATE accounts SET balance = balance + :amount WHERE id = :account_id;"},
	{Name: "retry-on", Usage: "@retry-on busy|serialization_failure|conflict", Meaning: "a transaction that fails with one of the named errors rolls back and runs again from its BEGIN, at most 5 times per delivery: busy is SQLite's SQLITE_BUSY and SQLITE_BUSY_SNAPSHOT (a transaction that has read cannot wait for the write lock), serialization_failure is PostgreSQL's 40001 and 40P01, conflict is all four, so one handler retries on either ledger. Without it the error reaches the handler, which fails, and the message is not acked: the broker delivers it again",
		Example: "@retry-on conflict\nBEGIN;\nINSERT INTO processed_messages(message_id, processed_at) VALUES (:message_id, :now) ON CONFLICT DO NOTHING;\n@stop-if-no-rows\nUPDATE accounts SET balance = balance + :amount WHERE id = :account_id;\nCOMMIT;"},
	{Name: "offsets", Usage: "@offsets " + strings.Join(offsetStyles, "|"), Meaning: "in a partition scenario (elsewhere it changes nothing), how the consumer keeps its place: auto-commit-poll is the Java consumer's enable.auto.commit, whose poll() first commits the records earlier polls returned (at least once when each batch is handled before the next poll); auto-commit-timer is a timer that commits every record handed out, processed or not (librdkafka's defaults, franz-go's GreedyAutoCommit), firing where a poll's timer-at places it; commit-after commits them once the batch is handled (the default); stored commits nothing to the group and, on assignment, seeks to next_offset in consumer_offsets, which the handler writes itself",
		Example: "@offsets stored\n@on credit\nBEGIN;\nUPDATE accounts SET balance = balance + :amount WHERE id = :account_id;\nUPDATE consumer_offsets SET next_offset = :offset + 1 WHERE partition_id = :partition;\nCOMMIT;"},
	{Name: "description", Usage: "@description TEXT", Meaning: "one line that lists show",
		Example: "@description Adds the amount to the balance.\nUPDATE accounts SET balance = balance + :amount WHERE id = :account_id;"},
	{Name: "idempotent", Usage: "@idempotent yes|no", Meaning: "the handler's claim, with @why for its reason",
		Example: "@idempotent no\n@why Every copy adds the amount again.\nUPDATE accounts SET balance = balance + :amount WHERE id = :account_id;"},
	{Name: "why", Usage: "@why TEXT", Meaning: "the reason for the @idempotent claim",
		Example: "@idempotent yes\n@why The balance is written, not added to.\nUPDATE accounts SET balance = :balance WHERE id = :account_id;"},
}

// directiveNames is "@description, @idempotent, …" for messages.
func directiveNames() string {
	names := make([]string, len(handlerDirectives))
	for i, d := range handlerDirectives {
		names[i] = "@" + d.Name
	}
	return strings.Join(names, ", ")
}

// Reference returns the handler reference (see HandlerReference).
func Reference() HandlerReference {
	var ref HandlerReference
	for _, name := range tableOrder {
		ref.Tables = append(ref.Tables, TableReference{Name: name, Columns: append([]string(nil), tableColumns[name]...), Schema: tableSchema(name)})
	}
	for _, name := range handlerParams {
		ref.Params = append(ref.Params, ParamReference{Name: name, Meaning: paramMeanings[name]})
	}
	ref.Directives = append(ref.Directives, handlerDirectives...)
	ref.Calls = append(ref.Calls, callReference...)
	return ref
}

// tableSchema is a table's CREATE TABLE statement in schemaSQL.
func tableSchema(name string) string {
	for _, line := range strings.Split(schemaSQL, "\n") {
		if strings.HasPrefix(line, "CREATE TABLE "+name+"(") {
			return strings.TrimSuffix(line, ";")
		}
	}
	return ""
}
