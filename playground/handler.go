package playground

import (
	"embed"
	"fmt"
	"sort"
	"strings"
)

// Handler is a consumer written as a handler script (see the package
// documentation for the format). Built-in handlers and learner handlers go
// through the same parser and the same engine.
type Handler struct {
	Name        string `json:"name"`
	Description string `json:"description"`
	Idempotent  bool   `json:"idempotent"`
	Why         string `json:"why"`
	Source      string `json:"source"`
	// Filter is true when the handler keeps an in-process set of ids.
	Filter bool `json:"filter"`
	// RetryOn (@retry-on): the errors on which the handler's consumer
	// rolls its transaction back and runs it again from BEGIN, as written
	// (busy, serialization_failure, conflict; retry.go). Without a word
	// that covers an error, the error fails the handler: no ack.
	RetryOn []string `json:"retry_on,omitempty"`
	// Offsets is how the handler's consumer keeps its place in a
	// partition (@offsets: auto-commit-poll, auto-commit-timer, commit-after
	// or stored; offsets.go);
	// "" runs as commit-after in a partition scenario.
	Offsets string `json:"offsets,omitempty"`

	sections map[string][]*statement // message kind (or "*") → statements
}

// Guards a statement may carry: what makes the handler stop and ack.
const (
	GuardStopIfNoRows = "stop-if-no-rows"
	GuardStopIfFound  = "stop-if-found"
)

type statement struct {
	Line   int      // 1-based line in the handler source where the statement starts
	SQL    string   // as written, without the trailing ';'
	Verb   string   // upper-case first keyword: SELECT, INSERT, BEGIN, …
	Params []string // parameter names in order of first appearance, without ':'
	Guard  string   // "", GuardStopIfNoRows or GuardStopIfFound
	// Immediate: BEGIN IMMEDIATE or BEGIN EXCLUSIVE, which take the write
	// lock at once.
	Immediate bool
	// Call is a CALL to a system outside the database (provider.go); nil
	// for SQL.
	Call *outsideCall
	// ContinueOnError (@continue-on-error): the consumer catches this
	// statement's error and goes on to the next (pgabort.go).
	ContinueOnError bool
}

func (st *statement) isQuery() bool { return st.Verb == "SELECT" }

// Parameters a handler statement may use, bound from the message.
var handlerParams = []string{"message_id", "amount", "balance", "account_id", "order_id", "payment_id", "sku", "price", "version", "now", "offset", "partition"}

// Message kinds a handler can have a section for.
var messageKinds = []string{KindCredit, KindShip, KindPrice}

// statementVerbs are the verbs a handler statement may start with, in the
// order error messages list them; CALL is a call outside the database
// (provider.go), the others SQL.
var statementVerbs = []string{"SELECT", "INSERT", "UPDATE", "DELETE", "REPLACE", "BEGIN", "COMMIT", "END", "ROLLBACK", "CALL"}

// allowedVerbs are statementVerbs that are SQL.
var allowedVerbs = func() map[string]bool {
	m := map[string]bool{}
	for _, v := range statementVerbs {
		if v != "CALL" {
			m[v] = true
		}
	}
	return m
}()

// verbList is statementVerbs as a sentence: "SELECT, …, ROLLBACK and CALL".
func verbList() string {
	n := len(statementVerbs)
	return strings.Join(statementVerbs[:n-1], ", ") + " and " + statementVerbs[n-1]
}

//go:embed handlers/*.handler
var handlerFiles embed.FS

// builtinOrder is the teaching order of the built-in handlers.
var builtinOrder = []string{
	"increment", "set-value", "dedupe-tx", "conditional", "check-then-insert",
	"mark-before", "mark-after", "memory-filter", "filter-dedupe", "dedupe-key",
	"versioned-set",
	"auto-commit-poll", "auto-commit-timer", "commit-after", "offset-tx",
}

var builtinHandlers = func() map[string]*Handler {
	m := map[string]*Handler{}
	for _, name := range builtinOrder {
		m[name] = mustLoadHandler(name)
	}
	return m
}()

// mustLoadHandler parses the embedded handlers/NAME.handler.
func mustLoadHandler(name string) *Handler {
	src, err := handlerFiles.ReadFile("handlers/" + name + ".handler")
	if err != nil {
		panic(err)
	}
	h, err := ParseHandler(name, string(src))
	if err != nil {
		panic(fmt.Sprintf("built-in handler %s: %v", name, err))
	}
	return h
}

// addHandlers appends built-in handlers, in teaching order, to those of
// builtinOrder (a topic's file registers its own from init).
func addHandlers(names ...string) {
	for _, name := range names {
		builtinHandlers[name] = mustLoadHandler(name)
		builtinOrder = append(builtinOrder, name)
	}
}

// Handlers returns the built-in handlers in teaching order.
func Handlers() []*Handler {
	out := make([]*Handler, len(builtinOrder))
	for i, name := range builtinOrder {
		out[i] = builtinHandlers[name]
	}
	return out
}

// LookupHandler returns a built-in handler by name; the error lists the known names.
func LookupHandler(name string) (*Handler, error) {
	if h, ok := builtinHandlers[name]; ok {
		return h, nil
	}
	if hint := retiredHandlerHint(name); hint != "" {
		return nil, &InputError{Field: "handlers", Msg: hint}
	}
	return nil, &InputError{Field: "handlers", Msg: fmt.Sprintf("unknown handler %q; handlers are %s", clip(name), strings.Join(builtinOrder, ", "))}
}

// ParseHandler parses a handler script. Errors carry the line:
// "handler mine, line 4: unknown parameter :amout; parameters are …".
func ParseHandler(name, source string) (*Handler, error) {
	h, line, err := parseHandler(name, source)
	if err != nil {
		return nil, handlerInputError(name, line, err)
	}
	return h, nil
}

// handlerInputError places a handler's parse error: "handler mine, line 4: …";
// nil stays nil.
func handlerInputError(name string, line int, err error) error {
	if err == nil {
		return nil
	}
	where := "handler " + clip(name)
	if line > 0 {
		where += fmt.Sprintf(", line %d", line)
	}
	return &InputError{Field: "handler", Msg: where + ": " + err.Error(), Line: line}
}

func parseHandler(name, source string) (*Handler, int, error) {
	return parseHandlerChecked(name, source, checkSQL)
}

// parseHandlerChecked parses a handler whose statements check accepts
// (checkSQL for SQLite, pgCheckSQL for PostgreSQL).
func parseHandlerChecked(name, source string, check func(*statement) error) (*Handler, int, error) {
	if err := checkHandlerName(name); err != nil {
		return nil, 0, err
	}
	if i := strings.IndexByte(source, 0); i >= 0 {
		return nil, strings.Count(source[:i], "\n") + 1, fmt.Errorf("a NUL byte: SQLite would stop reading the statement there; remove it")
	}
	if len(source) > maxHandlerBytes {
		return nil, 0, fmt.Errorf("the source is %d bytes; the limit is %d", len(source), maxHandlerBytes)
	}
	h := &Handler{Name: name, Source: source, sections: map[string][]*statement{}}
	section := "*"
	var pending *statement // a statement whose closing ';' has not been seen
	var pendingText strings.Builder
	seen := map[string]int{} // directive → line, for duplicates
	total := 0
	lines := strings.Split(source, "\n")
	for i, raw := range lines {
		lineNo := i + 1
		line := strings.TrimSpace(strings.TrimSuffix(raw, "\r"))
		if pending == nil && (line == "" || strings.HasPrefix(line, "--")) {
			continue
		}
		if pending == nil && strings.HasPrefix(line, "@") {
			word, arg, _ := strings.Cut(line[1:], " ")
			arg = strings.TrimSpace(arg)
			once := func() error {
				if prev, ok := seen[word]; ok {
					return fmt.Errorf("@%s given twice (first on line %d)", word, prev)
				}
				seen[word] = lineNo
				return nil
			}
			switch word {
			case "description", "why":
				if err := once(); err != nil {
					return nil, lineNo, err
				}
				if arg == "" {
					return nil, lineNo, fmt.Errorf("@%s needs a sentence", word)
				}
				if word == "description" {
					h.Description = arg
				} else {
					h.Why = arg
				}
			case "idempotent":
				if err := once(); err != nil {
					return nil, lineNo, err
				}
				switch arg {
				case "yes":
					h.Idempotent = true
				case "no":
				default:
					return nil, lineNo, fmt.Errorf("@idempotent takes yes or no, not %q", clip(arg))
				}
			case "filter":
				if err := once(); err != nil {
					return nil, lineNo, err
				}
				if arg != "" {
					return nil, lineNo, fmt.Errorf("@filter takes no argument")
				}
				h.Filter = true
			case "retry-on":
				if err := once(); err != nil {
					return nil, lineNo, err
				}
				words, err := parseRetryOn(arg)
				if err != nil {
					return nil, lineNo, err
				}
				h.RetryOn = words
			case "offsets":
				if err := once(); err != nil {
					return nil, lineNo, err
				}
				if err := checkOffsetStyle(arg); err != nil {
					return nil, lineNo, err
				}
				h.Offsets = arg
			case "on":
				if !contains(messageKinds, arg) {
					return nil, lineNo, fmt.Errorf("@on takes a message kind (%s), not %q", strings.Join(messageKinds, ", "), clip(arg))
				}
				if _, dup := h.sections[arg]; dup {
					return nil, lineNo, fmt.Errorf("@on %s given twice", arg)
				}
				if line, err := checkTransactions(h.sections[section]); err != nil {
					return nil, line, err
				}
				section = arg
				h.sections[section] = []*statement{}
			case GuardStopIfNoRows, GuardStopIfFound:
				if arg != "" {
					return nil, lineNo, fmt.Errorf("@%s takes no argument", word)
				}
				stmts := h.sections[section]
				if len(stmts) == 0 {
					return nil, lineNo, fmt.Errorf("@%s must follow a statement", word)
				}
				last := stmts[len(stmts)-1]
				if last.Guard != "" {
					return nil, lineNo, fmt.Errorf("the statement on line %d already has @%s", last.Line, last.Guard)
				}
				if word == GuardStopIfFound && !last.isQuery() {
					return nil, lineNo, fmt.Errorf("@stop-if-found must follow a SELECT (line %d is %s)", last.Line, last.Verb)
				}
				if word == GuardStopIfNoRows && (last.isQuery() || isTxVerb(last.Verb) || last.Call != nil) {
					return nil, lineNo, fmt.Errorf("@stop-if-no-rows must follow INSERT, UPDATE, DELETE or REPLACE (line %d is %s)", last.Line, last.Verb)
				}
				last.Guard = word
			case directiveContinueOnError:
				if err := continueOnError(h.sections[section], arg); err != nil {
					return nil, lineNo, err
				}
			default:
				return nil, lineNo, fmt.Errorf("unknown directive @%s; directives are %s", clip(word), directiveNames())
			}
			continue
		}
		if pending == nil {
			pending = &statement{Line: lineNo}
			pendingText.Reset()
		} else {
			pendingText.WriteByte('\n')
		}
		if strings.HasPrefix(line, "--") {
			continue
		}
		pendingText.WriteString(line)
		if !strings.Contains(line, ";") || !sqlComplete(pendingText.String()+"\n") {
			continue
		}
		sqlText, err := splitStatement(pendingText.String())
		if err != nil {
			return nil, pending.Line, err
		}
		if err := pending.fill(sqlText); err != nil {
			return nil, pending.Line, err
		}
		total++
		if total > maxHandlerStmts {
			return nil, pending.Line, fmt.Errorf("more than %d statements", maxHandlerStmts)
		}
		h.sections[section] = append(h.sections[section], pending)
		pending = nil
	}
	if pending != nil {
		if strings.HasSuffix(strings.TrimSpace(pendingText.String()), ";") {
			return nil, pending.Line, fmt.Errorf("unterminated string literal, quoted name or comment: SQLite reads the final ';' as part of it")
		}
		return nil, pending.Line, fmt.Errorf("the statement does not end with ';'")
	}
	if line, err := checkTransactions(h.sections[section]); err != nil {
		return nil, line, err
	}
	if len(h.sections) == 0 || total == 0 {
		return nil, 0, fmt.Errorf("no SQL statements; a handler needs at least one, e.g. UPDATE accounts SET balance = balance + :amount WHERE id = :account_id;")
	}
	if h.Description == "" {
		h.Description = "A handler written by the learner."
	}
	for _, stmts := range h.sections {
		for _, st := range stmts {
			if st.Call != nil {
				continue // not SQL: fillCall checked it
			}
			if err := check(st); err != nil {
				return nil, st.Line, err
			}
		}
	}
	return h, 0, nil
}

func checkHandlerName(name string) error {
	if name == "" || len(name) > 40 {
		return fmt.Errorf("a handler name has 1 to 40 characters")
	}
	for _, r := range name {
		if !(r >= 'a' && r <= 'z' || r >= '0' && r <= '9' || r == '-') {
			return fmt.Errorf("a handler name may only contain a-z, 0-9 and '-'")
		}
	}
	return nil
}

// fill checks one statement's text: a single statement, an allowed verb,
// known parameters.
func (st *statement) fill(sqlText string) error {
	if sqlText == "" {
		return fmt.Errorf("empty statement")
	}
	st.SQL = sqlText
	verb, _, _ := strings.Cut(strings.Fields(sqlText)[0], "(")
	st.Verb = strings.ToUpper(verb)
	if st.Verb == "CALL" {
		return st.fillCall(sqlText)
	}
	if !allowedVerbs[st.Verb] {
		return fmt.Errorf("%s is not allowed; statements are %s", clip(verb), verbList())
	}
	if f := strings.Fields(strings.ToUpper(sqlText)); st.Verb == "BEGIN" && len(f) > 1 {
		st.Immediate = f[1] == "IMMEDIATE" || f[1] == "EXCLUSIVE"
	}
	for _, p := range sqlParams(sqlText) {
		name := p[1:]
		if p[0] != ':' || !contains(handlerParams, name) {
			return fmt.Errorf("unknown parameter %s; parameters are :%s", clip(p), strings.Join(handlerParams, ", :"))
		}
		st.Params = append(st.Params, name)
	}
	return nil
}

func isTxVerb(v string) bool { return v == "BEGIN" || v == "COMMIT" || v == "END" || v == "ROLLBACK" }

// checkTransactions rejects a section that leaves a transaction open or
// commits one it never began: the engine would otherwise hold a lock forever.
func checkTransactions(stmts []*statement) (int, error) {
	open := 0 // line of the open BEGIN
	for _, st := range stmts {
		switch st.Verb {
		case "BEGIN":
			if open > 0 {
				return st.Line, fmt.Errorf("BEGIN inside a transaction (opened on line %d)", open)
			}
			open = st.Line
		case "COMMIT", "END", "ROLLBACK":
			if open == 0 {
				return st.Line, fmt.Errorf("%s without BEGIN", st.Verb)
			}
			open = 0
		}
	}
	if open > 0 {
		return open, fmt.Errorf("BEGIN without COMMIT or ROLLBACK")
	}
	return 0, nil
}

// statementsFor returns the statements for a message kind: its own section,
// else the statements before any @on.
func (h *Handler) statementsFor(kind string) ([]*statement, bool) {
	if s, ok := h.sections[kind]; ok {
		return s, true
	}
	s, ok := h.sections["*"]
	return s, ok
}

// Kinds lists the message kinds the handler has statements for ("*" = any).
func (h *Handler) Kinds() []string {
	var out []string
	for k := range h.sections {
		out = append(out, k)
	}
	sort.Strings(out)
	return out
}

func contains(list []string, s string) bool {
	for _, x := range list {
		if x == s {
			return true
		}
	}
	return false
}
