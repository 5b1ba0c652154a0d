package playground

import (
	"embed"
	"fmt"
	"slices"
	"strconv"
	"strings"
)

// Handler SQL on PostgreSQL: the same handler scripts run on both ledgers
// where the SQL is common; what only SQLite reads is refused before the run
// with a hint at PostgreSQL's way, and the built-in handlers whose
// PostgreSQL form differs have a variant in handlers/postgres.

// pgPositional rewrites a statement's :name parameters as PostgreSQL's $1,
// $2… (one number per name, in order of first appearance) and returns the
// names. Quoted strings, quoted names, comments and :: casts are left alone.
func pgPositional(q string) (string, []string) { return pgPositionalText(q, false) }

// pgPositionalPadded is pgPositional with each parameter padded with
// spaces to its name's length, so that a position in the text sent is the
// same in the learner's (for the allow-list's errors).
func pgPositionalPadded(q string) (string, []string) { return pgPositionalText(q, true) }

func pgPositionalText(q string, pad bool) (string, []string) {
	var b strings.Builder
	var names []string
	for i := 0; i < len(q); i++ {
		c := q[i]
		switch {
		case c == '\'' || c == '"':
			j := i + 1
			for j < len(q) {
				if q[j] == c {
					if j+1 < len(q) && q[j+1] == c {
						j += 2
						continue
					}
					break
				}
				j++
			}
			end := min(j+1, len(q))
			b.WriteString(q[i:end])
			i = end - 1
		case strings.HasPrefix(q[i:], "--"):
			j := strings.IndexByte(q[i:], '\n')
			if j < 0 {
				j = len(q) - i - 1
			}
			b.WriteString(q[i : i+j+1])
			i += j
		case strings.HasPrefix(q[i:], "/*"):
			j := strings.Index(q[i+2:], "*/")
			end := len(q)
			if j >= 0 {
				end = i + 2 + j + 2
			}
			b.WriteString(q[i:end])
			i = end - 1
		case c == ':' && i+1 < len(q) && q[i+1] == ':':
			b.WriteString("::")
			i++
		case c == ':' && i+1 < len(q) && isIdentStart(q[i+1]):
			j := i + 1
			for j < len(q) && (isIdentStart(q[j]) || q[j] >= '0' && q[j] <= '9') {
				j++
			}
			name := q[i+1 : j]
			n := indexOf(names, name)
			if n < 0 {
				names = append(names, name)
				n = len(names) - 1
			}
			p := "$" + strconv.Itoa(n+1)
			b.WriteString(p)
			if pad && j-i > len(p) {
				b.WriteString(strings.Repeat(" ", j-i-len(p)))
			}
			i = j - 1
		default:
			b.WriteByte(c)
		}
	}
	return b.String(), names
}

func isIdentStart(c byte) bool { return c >= 'a' && c <= 'z' || c >= 'A' && c <= 'Z' || c == '_' }

func indexOf(list []string, s string) int {
	for i, x := range list {
		if x == s {
			return i
		}
	}
	return -1
}

// dialectRule marks syntax one database reads and the other does not.
type dialectRule struct {
	words []string // consecutive upper-cased words that mark it
	msg   string   // what it is, and the other database's way
}

// pgDialectRules are what SQLite reads and PostgreSQL does not, each with
// PostgreSQL's way. Each is matched on the statement's upper-cased words,
// outside quoted strings.
var pgDialectRules = []dialectRule{
	{[]string{"INSERT", "OR", "IGNORE"}, "INSERT OR IGNORE is SQLite's; on PostgreSQL write INSERT … ON CONFLICT DO NOTHING"},
	{[]string{"INSERT", "OR", "REPLACE"}, "INSERT OR REPLACE is SQLite's; on PostgreSQL write INSERT … ON CONFLICT (key) DO UPDATE SET …"},
	{[]string{"REPLACE", "INTO"}, "REPLACE INTO is SQLite's; on PostgreSQL write INSERT … ON CONFLICT (key) DO UPDATE SET …"},
	{[]string{"BEGIN", "IMMEDIATE"}, "BEGIN IMMEDIATE is SQLite's; on PostgreSQL write BEGIN (the ledger sets the isolation level)"},
	{[]string{"BEGIN", "EXCLUSIVE"}, "BEGIN EXCLUSIVE is SQLite's; on PostgreSQL write BEGIN (the ledger sets the isolation level)"},
	{[]string{"BEGIN", "DEFERRED"}, "BEGIN DEFERRED is SQLite's; on PostgreSQL write BEGIN (the ledger sets the isolation level)"},
	{[]string{"ROWID"}, "PostgreSQL tables have no rowid (42703); name a column, or use the primary key"},
	{[]string{"OID"}, "PostgreSQL tables have no rowid or oid (42703); name a column, or use the primary key"},
	{[]string{"_ROWID_"}, "PostgreSQL tables have no rowid (42703); name a column, or use the primary key"},
}

// sqliteDialectRules are what PostgreSQL reads and SQLite does not, each
// with what SQLite offers instead; they name the problem when SQLite cannot
// prepare a learner's statement (sqliteDialectProblem).
var sqliteDialectRules = []dialectRule{
	{[]string{"FOR", "UPDATE"}, "FOR UPDATE is PostgreSQL's; SQLite has no row locks: BEGIN IMMEDIATE takes the database's write lock at BEGIN, before the check"},
	{[]string{"FOR", "NO", "KEY", "UPDATE"}, "FOR NO KEY UPDATE is PostgreSQL's; SQLite has no row locks: BEGIN IMMEDIATE takes the database's write lock at BEGIN, before the check"},
	{[]string{"FOR", "SHARE"}, "FOR SHARE is PostgreSQL's; SQLite has no row locks: BEGIN IMMEDIATE takes the database's write lock at BEGIN, before the check"},
	{[]string{"FOR", "KEY", "SHARE"}, "FOR KEY SHARE is PostgreSQL's; SQLite has no row locks: BEGIN IMMEDIATE takes the database's write lock at BEGIN, before the check"},
	{[]string{"PG_ADVISORY_XACT_LOCK"}, "pg_advisory_xact_lock is PostgreSQL's; SQLite has no advisory locks: BEGIN IMMEDIATE takes the database's write lock at BEGIN, before the check"},
	{[]string{"HASHTEXT"}, "hashtext is PostgreSQL's; SQLite has no advisory locks to hash a key for: BEGIN IMMEDIATE takes the database's write lock at BEGIN"},
	{[]string{"ILIKE"}, "ILIKE is PostgreSQL's; SQLite's LIKE already ignores the case of ASCII letters"},
	{[]string{"BEGIN", "ISOLATION"}, "SQLite has no isolation level to choose (its transactions are serializable): write BEGIN, or BEGIN IMMEDIATE; on a PostgreSQL ledger the Ledger switch sets the level"},
	{[]string{"BEGIN", "WORK"}, "BEGIN WORK is PostgreSQL's; on SQLite write BEGIN"},
	{[]string{"COMMIT", "WORK"}, "COMMIT WORK is PostgreSQL's; on SQLite write COMMIT"},
	{[]string{"ROLLBACK", "WORK"}, "ROLLBACK WORK is PostgreSQL's; on SQLite write ROLLBACK"},
}

// sqliteDialectProblem says which PostgreSQL-only syntax q uses, or "".
func sqliteDialectProblem(q string) string {
	return matchDialectRule(pgWords(q), sqliteDialectRules)
}

// pgWords splits a statement into upper-cased words outside quoted strings
// and comments; a backquote or a bracket is reported as a word of its own.
func pgWords(q string) []string {
	var words []string
	var cur strings.Builder
	flush := func() {
		if cur.Len() > 0 {
			words = append(words, strings.ToUpper(cur.String()))
			cur.Reset()
		}
	}
	for i := 0; i < len(q); i++ {
		c := q[i]
		switch {
		case c == '\'':
			flush()
			for i++; i < len(q) && q[i] != '\''; i++ {
			}
		case strings.HasPrefix(q[i:], "--"):
			flush()
			for ; i < len(q) && q[i] != '\n'; i++ {
			}
		case c == '`' || c == '[':
			flush()
			words = append(words, string(c))
		case isIdentStart(c) || c >= '0' && c <= '9' || c == '$':
			cur.WriteByte(c)
		default:
			flush()
			if c == '(' {
				words = append(words, "(")
			}
		}
	}
	flush()
	return words
}

// pgFunctions are the functions a learner's statement may call on
// PostgreSQL: the role's privileges bound the rest, but a function such as
// set_config could change the session's own settings, so calls are an
// allow-list here as on SQLite.
var pgFunctions = []string{"abs", "coalesce", "concat", "count", "greatest", "hashtext", "least", "length", "lower", "max", "min", "nullif", "pg_advisory_xact_lock", "substr", "sum", "upper"}

// checkPostgresDialect refuses a handler whose SQL only SQLite reads, with
// the line and PostgreSQL's way.
func checkPostgresDialect(h *Handler) error {
	for _, kind := range h.Kinds() {
		for _, st := range h.sections[kind] {
			if st.Call != nil {
				continue // not SQL: a call outside the database
			}
			if msg := pgDialectProblem(st.SQL); msg != "" {
				return &InputError{Field: "handler", Line: st.Line,
					Msg: fmt.Sprintf("handler %s, line %d: %s", clip(h.Name), st.Line, msg)}
			}
		}
	}
	return nil
}

// pgDialectProblem says which SQLite-only syntax q uses, with
// PostgreSQL's way, or "": hints only. What a statement may touch is
// decided by PostgreSQL's parser (pgAllowList), never by this scan.
func pgDialectProblem(q string) string {
	words := pgWords(q)
	if msg := matchDialectRule(words, pgDialectRules); msg != "" {
		return msg
	}
	for _, w := range words {
		if w == "`" || w == "[" {
			return "quote a name with double quotes on PostgreSQL, not " + w
		}
	}
	return ""
}

// matchDialectRule returns the message of the first rule whose words stand
// together in words, or "".
func matchDialectRule(words []string, rules []dialectRule) string {
	for _, r := range rules {
		for i := 0; i+len(r.words) <= len(words); i++ {
			if slices.Equal(words[i:i+len(r.words)], r.words) {
				return r.msg
			}
		}
	}
	return ""
}

func pgCallList() string { return strings.Join(pgFunctions, ", ") }

// pgTxControlProblem refuses transaction control beyond BEGIN, COMMIT, END
// and ROLLBACK (each with TRANSACTION or WORK or nothing): the ledger sets
// the isolation level, and a BEGIN that chose its own (or READ ONLY, or a
// savepoint) would make the run's verdict one of another level than the
// ledger the learner picked.
func pgTxControlProblem(words []string) error {
	if len(words) == 0 {
		return nil
	}
	rest := words[1:]
	if len(rest) == 1 && (rest[0] == "TRANSACTION" || rest[0] == "WORK") {
		rest = nil
	}
	if len(rest) == 0 {
		return nil
	}
	if words[0] == "BEGIN" {
		return fmt.Errorf("write BEGIN alone on PostgreSQL: the ledger sets the isolation level (pick it with the Ledger switch), and %s is not part of a handler's transaction", strings.Join(rest, " "))
	}
	return fmt.Errorf("write %s alone: %s %s is not part of a handler's transaction", words[0], words[0], strings.Join(rest, " "))
}

// pgCheckSQL is checkSQL for PostgreSQL: PostgreSQL's parser reads the
// statement and the allow-list walks its tree (pgparse.go); when it
// refuses, a hint at PostgreSQL's way comes first where the scan of
// SQLite-only syntax has one.
func pgCheckSQL(st *statement) error {
	p := pgPlanOf(st.SQL)
	if p.refusal == nil || pgParserOff.Load() {
		return nil
	}
	if p.refusal.syntax {
		if msg := pgDialectProblem(st.SQL); msg != "" {
			return fmt.Errorf("%s", msg)
		}
	}
	if isTxVerb(st.Verb) {
		if err := pgTxControlProblem(pgWords(st.SQL)); err != nil {
			return err
		}
	}
	return p.refusal.at(st.Line)
}

// ParseHandlerFor parses a learner's handler for the ledger it will run
// on: on PostgreSQL its SQL is checked by PostgreSQL's rules (so FOR
// UPDATE and advisory locks are accepted there, SQLite-only syntax is
// refused with a hint), on SQLite as ParseHandler does.
func ParseHandlerFor(name, source string, lg Ledger) (*Handler, error) {
	if lg.Postgres == nil {
		return ParseHandler(name, source)
	}
	h, line, err := parseHandlerChecked(name, source, pgCheckSQL)
	if err != nil {
		return nil, handlerInputError(name, line, err)
	}
	return h, nil
}

//go:embed handlers/postgres/*.handler
var pgHandlerFiles embed.FS

// pgVariants are the built-in handlers whose PostgreSQL form differs: on
// REPEATABLE READ and SERIALIZABLE a concurrent duplicate raises 40001
// instead of skipping, so the handlers that skip a duplicate also retry on
// a serialization failure.
var pgVariants = func() map[string]*Handler {
	m := map[string]*Handler{}
	entries, err := pgHandlerFiles.ReadDir("handlers/postgres")
	if err != nil {
		panic(err)
	}
	for _, e := range entries {
		name := strings.TrimSuffix(e.Name(), ".handler")
		src, err := pgHandlerFiles.ReadFile("handlers/postgres/" + e.Name())
		if err != nil {
			panic(err)
		}
		h, err := ParseHandler(name, string(src))
		if err != nil {
			panic(fmt.Sprintf("PostgreSQL variant of %s: %v", name, err))
		}
		if err := checkPostgresDialect(h); err != nil {
			panic(fmt.Sprintf("PostgreSQL variant of %s: %v", name, err))
		}
		m[name] = h
	}
	return m
}()

// forLedger is the handler a run on the ledger executes: a built-in
// handler's PostgreSQL variant where it has one.
func (lg Ledger) forLedger(h *Handler) *Handler {
	if lg.Postgres != nil && isBuiltinHandler(h) {
		if v, ok := pgVariants[h.Name]; ok {
			return v
		}
	}
	return h
}

// check refuses, before anything runs, handlers the ledger cannot run.
func (lg Ledger) check(hs []*Handler) error {
	if lg.Postgres == nil {
		return nil
	}
	for _, h := range hs {
		h = lg.forLedger(h)
		if isBuiltinHandler(h) || pgVariants[h.Name] == h {
			if err := checkPostgresDialect(h); err != nil {
				return err
			}
			continue
		}
		// A learner's handler, parsed for either ledger: PostgreSQL's
		// parser checks each statement before anything runs.
		for _, kind := range h.Kinds() {
			for _, st := range h.sections[kind] {
				if st.Call != nil {
					continue
				}
				if err := pgCheckSQL(st); err != nil {
					return &InputError{Field: "handler", Line: st.Line,
						Msg: fmt.Sprintf("handler %s, line %d: %s", clip(h.Name), st.Line, err)}
				}
			}
		}
	}
	return nil
}
