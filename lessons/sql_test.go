package lessons

import (
	"context"
	"database/sql"
	"fmt"
	"io/fs"
	"strings"
	"testing"

	_ "modernc.org/sqlite"
)

// sqlStatement is one statement of a lesson SQL file with the "-- expect"
// comments that follow it.
type sqlStatement struct {
	text   string
	line   int      // file line of its first line
	expect []string // "expect: changes=1", "expect rows: a, b", …
}

// parseSQLFile splits a lesson SQL file into statements. A statement ends with
// ";" as the last character of a line; "-- expect" comment lines attach to the
// statement just before them (see the package documentation).
func parseSQLFile(src string) ([]sqlStatement, error) {
	var out []sqlStatement
	var cur strings.Builder
	start := 0
	for n, line := range strings.Split(strings.ReplaceAll(src, "\r\n", "\n"), "\n") {
		n++
		trim := strings.TrimSpace(line)
		if strings.HasPrefix(trim, "-- expect") {
			if cur.Len() > 0 || len(out) == 0 {
				return nil, fmt.Errorf("line %d: an expect comment must follow a complete statement", n)
			}
			out[len(out)-1].expect = append(out[len(out)-1].expect, strings.TrimPrefix(trim, "-- "))
			continue
		}
		if (trim == "" || strings.HasPrefix(trim, "--")) && cur.Len() == 0 {
			continue
		}
		if cur.Len() == 0 {
			start = n
		}
		cur.WriteString(line + "\n")
		if strings.HasSuffix(trim, ";") {
			out = append(out, sqlStatement{text: cur.String(), line: start})
			cur.Reset()
		}
	}
	if cur.Len() > 0 {
		return nil, fmt.Errorf("line %d: statement without a final ';'", start)
	}
	return out, nil
}

// runSQLFile runs the statements on a fresh in-memory database, one
// connection, and checks every expectation. It returns how many it checked.
func runSQLFile(ctx context.Context, stmts []sqlStatement) (int, error) {
	db, err := sql.Open("sqlite", ":memory:")
	if err != nil {
		return 0, err
	}
	defer db.Close()
	db.SetMaxOpenConns(1) // every statement sees the same in-memory database
	checked := 0
	for _, s := range stmts {
		var wantErr, wantRows, wantChanges string
		for _, e := range s.expect {
			switch {
			case strings.HasPrefix(e, "expect: error "):
				wantErr = strings.TrimPrefix(e, "expect: error ")
			case strings.HasPrefix(e, "expect: changes="):
				wantChanges = strings.TrimPrefix(e, "expect: changes=")
			case strings.HasPrefix(e, "expect rows: "):
				wantRows = strings.TrimPrefix(e, "expect rows: ")
			default:
				return checked, fmt.Errorf("line %d: unknown expectation %q (want expect: changes=N, expect: error TEXT or expect rows: …)", s.line, e)
			}
			checked++
		}
		if wantRows != "" {
			rows, err := db.QueryContext(ctx, s.text)
			if err != nil {
				return checked, fmt.Errorf("line %d: %v", s.line, err)
			}
			got, err := formatRows(rows)
			if err != nil {
				return checked, fmt.Errorf("line %d: %v", s.line, err)
			}
			if got != wantRows {
				return checked, fmt.Errorf("line %d: rows are %q, the file claims %q", s.line, got, wantRows)
			}
			continue
		}
		res, err := db.ExecContext(ctx, s.text)
		if wantErr != "" {
			if err == nil || !strings.Contains(err.Error(), wantErr) {
				return checked, fmt.Errorf("line %d: the file claims an error containing %q, got %v", s.line, wantErr, err)
			}
			continue
		}
		if err != nil {
			return checked, fmt.Errorf("line %d: %v", s.line, err)
		}
		if wantChanges != "" {
			n, err := res.RowsAffected()
			if err != nil || fmt.Sprint(n) != wantChanges {
				return checked, fmt.Errorf("line %d: changed %d rows (%v), the file claims %s", s.line, n, err, wantChanges)
			}
		}
	}
	return checked, nil
}

// formatRows prints a result as the "expect rows:" comments write it:
// columns joined by ", ", rows by "; ", NULL for null, "none" for no rows.
func formatRows(rows *sql.Rows) (string, error) {
	defer rows.Close()
	cols, err := rows.Columns()
	if err != nil {
		return "", err
	}
	var out []string
	for rows.Next() {
		vals := make([]any, len(cols))
		ptrs := make([]any, len(cols))
		for i := range vals {
			ptrs[i] = &vals[i]
		}
		if err := rows.Scan(ptrs...); err != nil {
			return "", err
		}
		cells := make([]string, len(cols))
		for i, v := range vals {
			switch v := v.(type) {
			case nil:
				cells[i] = "NULL"
			case []byte:
				cells[i] = string(v)
			default:
				cells[i] = fmt.Sprint(v)
			}
		}
		out = append(out, strings.Join(cells, ", "))
	}
	if err := rows.Err(); err != nil {
		return "", err
	}
	if len(out) == 0 {
		return "none", nil
	}
	return strings.Join(out, "; "), nil
}

// TestSQL_ExpectationsHold runs every lesson SQL file against SQLite and
// checks each "-- expect" claim, so that the SQL a lesson shows does what the
// lesson says.
func TestSQL_ExpectationsHold(t *testing.T) {
	files, err := fs.Glob(Embedded(), "sql/*.sql")
	if err != nil || len(files) == 0 {
		t.Fatalf("no lesson SQL files (%v)", err)
	}
	for _, file := range files {
		t.Run(strings.TrimSuffix(strings.TrimPrefix(file, "sql/"), ".sql"), func(t *testing.T) {
			src, err := fs.ReadFile(Embedded(), file)
			if err != nil {
				t.Fatal(err)
			}
			stmts, err := parseSQLFile(string(src))
			if err != nil {
				t.Fatalf("lessons/%s: %v", file, err)
			}
			n, err := runSQLFile(t.Context(), stmts)
			if err != nil {
				t.Fatalf("lessons/%s: %v", file, err)
			}
			if n == 0 {
				t.Errorf("lessons/%s claims nothing: add -- expect comments", file)
			}
		})
	}
}

func TestSQL_CatchesAWrongClaim(t *testing.T) {
	cases := []struct{ name, src, want string }{
		{"Changes", "CREATE TABLE t(id INTEGER PRIMARY KEY);\nINSERT INTO t VALUES (1);\n-- expect: changes=2\n", "line 2: changed 1 rows (<nil>), the file claims 2"},
		{"Rows", "SELECT 1, NULL;\n-- expect rows: 1, 2\n", `line 1: rows are "1, NULL", the file claims "1, 2"`},
		{"MissingError", "SELECT 1;\n-- expect: error no such table\n", `line 1: the file claims an error containing "no such table", got <nil>`},
		{"UnexpectedError", "\n-- setup\nSELECT * FROM missing;\n", "line 3: SQL logic error: no such table: missing (1)"},
		{"UnknownClaim", "SELECT 1;\n-- expect: faster\n", `line 1: unknown expectation "expect: faster" (want expect: changes=N, expect: error TEXT or expect rows: …)`},
	}
	for _, tc := range cases {
		t.Run(tc.name, func(t *testing.T) {
			stmts, err := parseSQLFile(tc.src)
			if err == nil {
				_, err = runSQLFile(t.Context(), stmts)
			}
			if err == nil || err.Error() != tc.want {
				t.Errorf("got %v\nwant %s", err, tc.want)
			}
		})
	}
	for name, src := range map[string]string{
		"ExpectFirst":  "-- expect: changes=1\nSELECT 1;\n",
		"Unterminated": "SELECT 1\n",
	} {
		if _, err := parseSQLFile(src); err == nil {
			t.Errorf("%s: parseSQLFile accepted %q", name, src)
		}
	}
}
