package playground

import (
	"fmt"
	"slices"
	"strconv"
)

// The ledger's tables: the schema both databases are built from (SQLite's
// types here, PostgreSQL's translated in pgledger.go), the one table list
// that the trace's order, the PostgreSQL role's grants and both dialects'
// allow-lists take theirs from, and how a trace names a row and prints a
// value.

// schemaSQL is the ledger every scenario starts from; scenarios differ only
// in their initial rows.
const schemaSQL = `
CREATE TABLE accounts(id TEXT PRIMARY KEY, balance INTEGER NOT NULL);
CREATE TABLE orders(id TEXT PRIMARY KEY, state TEXT NOT NULL, shipped_at INTEGER);
CREATE TABLE shipments(order_id TEXT NOT NULL, message_id TEXT NOT NULL, shipped_at INTEGER NOT NULL);
CREATE TABLE processed_messages(message_id TEXT PRIMARY KEY, processed_at INTEGER NOT NULL);
CREATE TABLE prices(sku TEXT PRIMARY KEY, price INTEGER NOT NULL, version INTEGER NOT NULL);
CREATE TABLE consumer_offsets(partition_id TEXT PRIMARY KEY, next_offset INTEGER NOT NULL);
CREATE TABLE inbox(message_id TEXT PRIMARY KEY, received_at INTEGER NOT NULL, processed_at INTEGER);
CREATE TABLE outbox(message_id TEXT PRIMARY KEY, created_at INTEGER NOT NULL, sent_at INTEGER);
`

// tableOrder is the order tables appear in traces; tableColumns their columns.
var tableOrder = []string{"accounts", "orders", "shipments", "prices", "processed_messages", "consumer_offsets", "inbox", "outbox"}

// storyTables are tables only some scenarios use: a trace leaves one out
// while it is empty, so the traces of the other scenarios read as before.
var storyTables = map[string]bool{"prices": true, "consumer_offsets": true, "inbox": true, "outbox": true} // consumer_offsets: partition scenarios (offsets.go); inbox, outbox: provider.go

var tableColumns = map[string][]string{
	"accounts":           {"id", "balance"},
	"orders":             {"id", "state", "shipped_at"},
	"shipments":          {"order_id", "message_id", "shipped_at"},
	"processed_messages": {"message_id", "processed_at"},
	"prices":             {"sku", "price", "version"},
	"consumer_offsets":   {"partition_id", "next_offset"},
	"inbox":              {"message_id", "received_at", "processed_at"},
	"outbox":             {"message_id", "created_at", "sent_at"},
}

type tableState map[string]map[int64][]any // table → rowid → values

func (s tableState) clone() tableState {
	out := make(tableState, len(s))
	for t, rows := range s {
		m := make(map[int64][]any, len(rows))
		for id, v := range rows {
			m[id] = v // rows are never mutated in place, only replaced
		}
		out[t] = m
	}
	return out
}

// renderTables renders rows for the trace, in table order and rowid order.
func renderTables(state tableState) []TableRows {
	out := make([]TableRows, 0, len(tableOrder))
	for _, t := range tableOrder {
		if tr, ok := renderTable(state, t); ok {
			out = append(out, tr)
		}
	}
	return out
}

// renderTable renders one table's rows in rowid order; ok is false for a
// story table left out while it is empty.
func renderTable(state tableState, t string) (TableRows, bool) {
	rows := state[t]
	if len(rows) == 0 && storyTables[t] {
		return TableRows{}, false
	}
	ids := make([]int64, 0, len(rows))
	for id := range rows {
		ids = append(ids, id)
	}
	slices.Sort(ids)
	tr := TableRows{Table: t, Columns: tableColumns[t], Rows: make([]Row, len(ids))}
	for i, id := range ids {
		tr.Rows[i] = Row{Key: rowKey(t, id, rows[id]), Values: rows[id]}
	}
	return tr, true
}

// rowKey names a row in traces: the primary key, or "#rowid" for shipments.
func rowKey(table string, rowid int64, values []any) string {
	if table == "shipments" || len(values) == 0 {
		return "#" + strconv.FormatInt(rowid, 10)
	}
	return valueText(values[0])
}

// valueText prints a column value as fmt.Sprint does, without fmt for the
// kinds SQLite gives (text, integer, real, null).
func valueText(v any) string {
	switch x := v.(type) {
	case string:
		return x
	case int64:
		return strconv.FormatInt(x, 10)
	case float64:
		return strconv.FormatFloat(x, 'g', -1, 64)
	case nil:
		return "<nil>"
	}
	return fmt.Sprint(v)
}
