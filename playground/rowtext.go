package playground

import (
	"fmt"
	"strconv"
)

// How a trace names a row and prints a value.

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
