package playground

import (
	"errors"
	"fmt"
	"strings"
	"sync"
	"sync/atomic"
	"unicode/utf8"

	pg_query "github.com/pganalyze/pg_query_go/v6"
	pgquery "github.com/wasilibs/go-pgquery"
	pgqueryparser "github.com/wasilibs/go-pgquery/parser"
	"google.golang.org/protobuf/reflect/protoreflect"
)

// A learner's SQL on a PostgreSQL ledger is held by PostgreSQL's own
// parser: libpg_query, PostgreSQL's parser as a library, here compiled to
// WebAssembly and run by wazero (github.com/wasilibs/go-pgquery), so the
// binary stays CGO_ENABLED=0; building with -tags pgquery_cgo links the C
// library instead (faster to start and to parse, needs cgo). The
// allow-list walks the parse tree: a lexical scan of SQL is never a
// security boundary (a "--" inside a quoted name hid the rest of a line
// from the scan this replaces).
//
// The parser starts (compiles its WebAssembly, about two seconds) once per
// process, when a pool of PostgreSQL ledgers opens or when a handler is
// first checked for PostgreSQL; a server without PostgreSQL never starts
// it. Each statement text is parsed once (pgPlanOf keeps the result), so a
// click parses nothing.
//
// The role's privileges are the second wall (pgledger.go), tested with the
// parser switched off (pgattack_test.go).

// pgPlan is a statement as a PostgreSQL ledger runs it.
type pgPlan struct {
	sql     string   // the text sent: :name parameters as $1, $2… (padded to keep positions)
	names   []string // the parameters' names, by number
	refusal *pgRefusal
	// readOnly: a SELECT that takes no lock (no FOR UPDATE or SHARE, no
	// advisory lock, no WITH); waitsHoldingNothing: while it waits on a
	// lock, the statement holds none that another could wait on (an INSERT
	// of one row of VALUES, or a SELECT without FROM, such as an advisory
	// lock's; no subquery, no WITH). Both false for what did not parse.
	readOnly, waitsHoldingNothing bool
}

// pgRefusal is why the allow-list refuses a statement, and where.
type pgRefusal struct {
	msg    string
	line   int  // 1-based, within the statement
	col    int  // 1-based, in characters
	syntax bool // PostgreSQL's parser could not read it
}

// at says what and where, with the statement's first line at handler line
// first (0: unknown, the position is the statement's own).
func (r *pgRefusal) at(first int) error {
	if first > 0 {
		return fmt.Errorf("%s (line %d, column %d)", r.msg, first+r.line-1, r.col)
	}
	return fmt.Errorf("%s (line %d, column %d of the statement)", r.msg, r.line, r.col)
}

// pgParserOff switches the allow-list off: the tests that show the
// privileges hold alone (pgattack_test.go) set it. Nothing else does.
var pgParserOff atomic.Bool

var (
	pgParser   sync.Mutex // one parse at a time: go-pgquery starts a new WebAssembly instance (seconds) per concurrent parse
	pgParses   atomic.Int64
	pgPlansMu  sync.Mutex
	pgPlans    = map[string]*pgPlan{}
	pgWarmOnce sync.Once
)

// pgPlanCacheSize bounds the plans kept: a full cache is emptied, which
// costs the next clicks one parse per statement.
const pgPlanCacheSize = 4096

// pgParserWarm starts the parser (once per process).
func pgParserWarm() {
	pgWarmOnce.Do(func() {
		pgParser.Lock()
		defer pgParser.Unlock()
		pgquery.Parse("SELECT 1")
	})
}

// pgPlanOf returns q's plan, parsing q the first time it is seen.
func pgPlanOf(q string) *pgPlan {
	pgPlansMu.Lock()
	p, ok := pgPlans[q]
	pgPlansMu.Unlock()
	if ok {
		return p
	}
	p = &pgPlan{}
	p.sql, p.names = pgPositionalPadded(q)
	var tree *pg_query.ParseResult
	p.refusal, tree = pgCheckTree(p.sql)
	if tree != nil && len(tree.Stmts) == 1 {
		p.readOnly, p.waitsHoldingNothing = pgLockTraits(tree.Stmts[0].Stmt)
	}
	pgPlansMu.Lock()
	if len(pgPlans) >= pgPlanCacheSize {
		clear(pgPlans)
	}
	pgPlans[q] = p
	pgPlansMu.Unlock()
	return p
}

// pgParse parses sql with PostgreSQL's parser.
func pgParse(sql string) (*pg_query.ParseResult, error) {
	pgParserWarm()
	pgParser.Lock()
	defer pgParser.Unlock()
	pgParses.Add(1)
	return pgquery.Parse(sql)
}

// pgAllowList parses sql and walks its tree: nil if a learner's handler
// may run it on a ledger.
func pgAllowList(sql string) *pgRefusal {
	r, _ := pgCheckTree(sql)
	return r
}

// pgCheckTree is pgAllowList, with the tree when sql parsed.
func pgCheckTree(sql string) (*pgRefusal, *pg_query.ParseResult) {
	// The parser reads a C string: it would stop at a NUL byte and check
	// only the text before it.
	if i := strings.IndexByte(sql, 0); i >= 0 {
		return refusalAt(sql, i, "a NUL byte is not allowed in SQL"), nil
	}
	if !utf8.ValidString(sql) {
		return &pgRefusal{msg: "the SQL is not valid UTF-8", line: 1, col: 1}, nil
	}
	tree, err := pgParse(sql)
	r := pgWalkTree(sql, tree, err)
	return r, tree
}

func pgWalkTree(sql string, tree *pg_query.ParseResult, err error) *pgRefusal {
	if err != nil {
		var pe *pgqueryparser.Error
		if errors.As(err, &pe) {
			r := refusalAt(sql, runeOffset(sql, pe.Cursorpos-1), "PostgreSQL cannot read this: "+pe.Message)
			r.syntax = true
			return r
		}
		return &pgRefusal{msg: "PostgreSQL cannot read this: " + err.Error(), line: 1, col: 1, syntax: true}
	}
	if len(tree.Stmts) != 1 {
		at := 0
		if len(tree.Stmts) > 1 {
			at = int(tree.Stmts[1].StmtLocation)
		}
		return refusalAt(sql, at, fmt.Sprintf("one statement at a time: this is %d", len(tree.Stmts)))
	}
	w := &pgWalker{sql: sql, ctes: map[string]bool{}}
	root := tree.Stmts[0].Stmt
	w.collectCTEs(root.ProtoReflect())
	if r := w.statement(root); r != nil {
		return r
	}
	return w.walk(root.ProtoReflect(), int32(tree.Stmts[0].StmtLocation))
}

// runeOffset turns a 0-based character offset into a byte offset.
func runeOffset(s string, chars int) int {
	i := 0
	for n := 0; n < chars && i < len(s); n++ {
		_, size := utf8.DecodeRuneInString(s[i:])
		i += size
	}
	return i
}

// refusalAt places msg at byte offset at of sql.
func refusalAt(sql string, at int, msg string) *pgRefusal {
	at = max(0, min(at, len(sql)))
	before := sql[:at]
	line := strings.Count(before, "\n") + 1
	col := utf8.RuneCountInString(before[strings.LastIndexByte(before, '\n')+1:]) + 1
	return &pgRefusal{msg: msg, line: line, col: col}
}

// pgStatementKinds are the statements a handler may run: its DML and the
// transaction control the engine follows.
var pgStatementKinds = map[string]bool{"SelectStmt": true, "InsertStmt": true, "UpdateStmt": true, "DeleteStmt": true, "TransactionStmt": true}

// pgNodeKinds are the parse tree's node kinds a handler's statement may
// hold; anything else (SELECT … INTO, window functions, function calls in
// FROM, CURRENT_USER and its kind, COLLATE, subscripts, WHERE CURRENT OF…)
// is refused. Tables, functions, operators, types and columns are checked
// by name as well (pgWalker.node).
var pgNodeKinds = map[string]bool{
	"Node": true, "List": true, "String": true, "Integer": true, "Float": true, "Boolean": true, "BitString": true,
	"SelectStmt": true, "InsertStmt": true, "UpdateStmt": true, "DeleteStmt": true, "TransactionStmt": true,
	"ResTarget": true, "MultiAssignRef": true, "ColumnRef": true, "A_Star": true, "A_Const": true, "ParamRef": true,
	"A_Expr": true, "BoolExpr": true, "NullTest": true, "BooleanTest": true, "SubLink": true, "CaseExpr": true,
	"CaseWhen": true, "CoalesceExpr": true, "MinMaxExpr": true, "RowExpr": true, "A_ArrayExpr": true,
	"TypeCast": true, "TypeName": true, "FuncCall": true, "SetToDefault": true, "SortBy": true,
	"RangeVar": true, "Alias": true, "JoinExpr": true, "RangeSubselect": true, "WithClause": true, "CommonTableExpr": true,
	"OnConflictClause": true, "InferClause": true, "IndexElem": true, "LockingClause": true,
}

// pgNodeNames say what a refused node kind is, in SQL's words.
var pgNodeNames = map[string]string{
	"IntoClause": "SELECT … INTO", "CreateStmt": "CREATE TABLE", "CreateTableAsStmt": "CREATE TABLE … AS",
	"CopyStmt": "COPY", "DoStmt": "DO", "ListenStmt": "LISTEN", "UnlistenStmt": "UNLISTEN", "NotifyStmt": "NOTIFY",
	"VariableSetStmt": "SET and RESET", "VariableShowStmt": "SHOW", "LockStmt": "LOCK", "DiscardStmt": "DISCARD",
	"ExplainStmt": "EXPLAIN", "PrepareStmt": "PREPARE", "ExecuteStmt": "EXECUTE", "DeallocateStmt": "DEALLOCATE",
	"CallStmt": "CALL", "TruncateStmt": "TRUNCATE", "DropStmt": "DROP", "AlterTableStmt": "ALTER TABLE",
	"CreateFunctionStmt": "CREATE FUNCTION", "ViewStmt": "CREATE VIEW", "GrantStmt": "GRANT and REVOKE",
	"DeclareCursorStmt": "DECLARE", "FetchStmt": "FETCH", "ClosePortalStmt": "CLOSE", "VacuumStmt": "VACUUM and ANALYZE",
	"MergeStmt": "MERGE", "CheckPointStmt": "CHECKPOINT", "LoadStmt": "LOAD", "CreateSchemaStmt": "CREATE SCHEMA",
	"WindowDef": "a window function (OVER)", "SQLValueFunction": "CURRENT_USER, CURRENT_TIMESTAMP and the like",
	"RangeFunction": "a function in FROM", "RangeTableFunc": "XMLTABLE", "RangeTableSample": "TABLESAMPLE",
	"CurrentOfExpr": "WHERE CURRENT OF", "CollateClause": "COLLATE", "A_Indirection": "a subscript or field selection",
	"A_Indices": "a subscript", "GroupingSet": "GROUPING SETS, ROLLUP and CUBE", "GroupingFunc": "GROUPING()",
	"CTESearchClause": "SEARCH in a WITH query", "CTECycleClause": "CYCLE in a WITH query", "XmlExpr": "XML functions",
	"XmlSerialize": "XMLSERIALIZE", "JsonTable": "JSON_TABLE",
}

// pgOperators are the operators a statement may use (LIKE is ~~, ILIKE ~~*).
var pgOperators = map[string]bool{
	"=": true, "<>": true, "<": true, ">": true, "<=": true, ">=": true,
	"+": true, "-": true, "*": true, "/": true, "%": true, "||": true,
	"~~": true, "!~~": true, "~~*": true, "!~~*": true,
}

// pgTypes are the types a value may be cast to.
var pgTypes = map[string]bool{
	"int2": true, "int4": true, "int8": true, "smallint": true, "int": true, "integer": true, "bigint": true,
	"text": true, "varchar": true, "bool": true, "boolean": true, "numeric": true, "decimal": true,
	"float4": true, "float8": true, "real": true,
}

// pgSystemColumns are PostgreSQL's hidden columns: they show other
// transactions' numbers and the rows' physical places, so a trace that
// read them would differ from run to run. rowid and oid are SQLite's.
var pgSystemColumns = map[string]string{
	"ctid": "", "xmin": "", "xmax": "", "cmin": "", "cmax": "", "tableoid": "",
	"oid":     "PostgreSQL tables have no rowid or oid (42703); name a column, or use the primary key",
	"rowid":   "PostgreSQL tables have no rowid (42703); name a column, or use the primary key",
	"_rowid_": "PostgreSQL tables have no rowid (42703); name a column, or use the primary key",
}

// pgWalker checks one statement's tree.
type pgWalker struct {
	sql  string
	ctes map[string]bool // names the statement's WITH queries define
}

func (w *pgWalker) refuse(loc int32, format string, args ...any) *pgRefusal {
	return refusalAt(w.sql, int(loc), fmt.Sprintf(format, args...))
}

// collectCTEs notes every WITH query's name.
func (w *pgWalker) collectCTEs(m protoreflect.Message) {
	if cte, ok := m.Interface().(*pg_query.CommonTableExpr); ok {
		w.ctes[cte.Ctename] = true
	}
	m.Range(func(fd protoreflect.FieldDescriptor, v protoreflect.Value) bool {
		switch {
		case fd.IsList() && fd.Message() != nil:
			for i := 0; i < v.List().Len(); i++ {
				w.collectCTEs(v.List().Get(i).Message())
			}
		case fd.Message() != nil && !fd.IsMap():
			w.collectCTEs(v.Message())
		}
		return true
	})
}

// statement checks the statement's kind: DML, or BEGIN, COMMIT (END) or
// ROLLBACK alone.
func (w *pgWalker) statement(n *pg_query.Node) *pgRefusal {
	m := n.ProtoReflect()
	inner := m.WhichOneof(m.Descriptor().Oneofs().ByName("node"))
	if inner == nil {
		return w.refuse(0, "an empty statement")
	}
	kind := string(inner.Message().Name())
	if !pgStatementKinds[kind] {
		return w.refuse(0, "%s is not allowed; a handler's statements are SELECT, INSERT, UPDATE, DELETE, BEGIN, COMMIT and ROLLBACK", pgNodeName(kind))
	}
	if tx := n.GetTransactionStmt(); tx != nil {
		switch tx.Kind {
		case pg_query.TransactionStmtKind_TRANS_STMT_BEGIN, pg_query.TransactionStmtKind_TRANS_STMT_COMMIT, pg_query.TransactionStmtKind_TRANS_STMT_ROLLBACK:
		default:
			return w.refuse(tx.Location, "only BEGIN, COMMIT and ROLLBACK control a handler's transaction")
		}
		if len(tx.Options) > 0 || tx.Chain || tx.SavepointName != "" || tx.Gid != "" {
			return w.refuse(tx.Location, "write BEGIN, COMMIT or ROLLBACK alone on PostgreSQL: the ledger sets the isolation level")
		}
	}
	return nil
}

func pgNodeName(kind string) string {
	if s, ok := pgNodeNames[kind]; ok {
		return s
	}
	return strings.TrimSuffix(kind, "Stmt")
}

// walk checks m and everything under it; loc is the nearest known
// position.
func (w *pgWalker) walk(m protoreflect.Message, loc int32) *pgRefusal {
	kind := string(m.Descriptor().Name())
	if f := m.Descriptor().Fields().ByName("location"); f != nil {
		if l := int32(m.Get(f).Int()); l > 0 {
			loc = l
		}
	}
	if !pgNodeKinds[kind] {
		return w.refuse(loc, "%s is not allowed in a handler's SQL on PostgreSQL", pgNodeName(kind))
	}
	if r := w.node(m.Interface(), loc); r != nil {
		return r
	}
	if _, ok := m.Interface().(*pg_query.LockingClause); ok {
		return nil // FOR UPDATE OF names the statement's own FROM items
	}
	var r *pgRefusal
	m.Range(func(fd protoreflect.FieldDescriptor, v protoreflect.Value) bool {
		switch {
		case fd.IsList() && fd.Message() != nil:
			for i := 0; i < v.List().Len() && r == nil; i++ {
				r = w.walk(v.List().Get(i).Message(), loc)
			}
		case fd.Message() != nil && !fd.IsMap():
			r = w.walk(v.Message(), loc)
		}
		return r == nil
	})
	return r
}

// names reads a list of String nodes (a qualified name).
func names(ns []*pg_query.Node) []string {
	out := make([]string, 0, len(ns))
	for _, n := range ns {
		if s := n.GetString_(); s != nil {
			out = append(out, s.Sval)
		} else {
			out = append(out, "*")
		}
	}
	return out
}

// node checks what a node names: tables, functions, operators, types,
// columns.
func (w *pgWalker) node(n any, loc int32) *pgRefusal {
	switch x := n.(type) {
	case *pg_query.RangeVar:
		name := x.Relname
		if x.Catalogname != "" || x.Schemaname != "" {
			name = strings.Trim(x.Catalogname+"."+x.Schemaname+"."+x.Relname, ".")
			return w.refuse(loc, "%s is not a ledger table; tables are %s", name, strings.Join(tableOrder, ", "))
		}
		// A WITH query's name reads the query; outside its scope the name
		// is looked up in the ledger's schema (no other table there) and
		// pg_catalog, whose every name starts with pg_.
		if !contains(tableOrder, name) && !(w.ctes[name] && !strings.HasPrefix(name, "pg_")) {
			return w.refuse(loc, "%s is not a ledger table; tables are %s", name, strings.Join(tableOrder, ", "))
		}
	case *pg_query.FuncCall:
		fn := names(x.Funcname)
		if len(fn) != 1 || !contains(pgFunctions, fn[0]) {
			return w.refuse(loc, "%s(…) is not allowed on a PostgreSQL ledger; functions are %s", strings.Join(fn, "."), pgCallList())
		}
		if x.FuncVariadic {
			return w.refuse(loc, "VARIADIC is not allowed")
		}
		if fn[0] == "pg_advisory_xact_lock" && len(x.Args) != 1 {
			return w.refuse(loc, "pg_advisory_xact_lock takes one key here (a bigint, such as hashtext(:message_id)); the ledger adds its own number")
		}
	case *pg_query.A_Expr:
		switch x.Kind {
		case pg_query.A_Expr_Kind_AEXPR_BETWEEN, pg_query.A_Expr_Kind_AEXPR_NOT_BETWEEN,
			pg_query.A_Expr_Kind_AEXPR_BETWEEN_SYM, pg_query.A_Expr_Kind_AEXPR_NOT_BETWEEN_SYM:
		case pg_query.A_Expr_Kind_AEXPR_SIMILAR:
			return w.refuse(loc, "SIMILAR TO is not allowed; write LIKE")
		default:
			if r := w.operator(x.Name, loc); r != nil {
				return r
			}
		}
	case *pg_query.SubLink:
		if len(x.OperName) > 0 {
			return w.operator(x.OperName, loc)
		}
	case *pg_query.SortBy:
		if len(x.UseOp) > 0 {
			return w.operator(x.UseOp, loc)
		}
	case *pg_query.TypeName:
		tn := names(x.Names)
		base := tn[len(tn)-1]
		if len(tn) > 2 || len(tn) == 2 && tn[0] != "pg_catalog" || !pgTypes[base] || x.Setof || x.PctType {
			return w.refuse(loc, "a cast to %s is not allowed; types are bigint, integer, smallint, text, varchar, boolean, numeric, real", strings.Join(tn, "."))
		}
	case *pg_query.ColumnRef:
		cols := names(x.Fields)
		if len(cols) > 2 {
			return w.refuse(loc, "%s: name a column as column or table.column", strings.Join(cols, "."))
		}
		if hint, ok := pgSystemColumns[cols[len(cols)-1]]; ok {
			if hint == "" {
				hint = cols[len(cols)-1] + " is a system column; a handler reads the ledger's own columns"
			}
			return w.refuse(loc, "%s", hint)
		}
	}
	return nil
}

func (w *pgWalker) operator(name []*pg_query.Node, loc int32) *pgRefusal {
	op := names(name)
	if len(op) != 1 || !pgOperators[op[0]] {
		return w.refuse(loc, "the operator %s is not allowed; operators are = <> < > <= >= + - * / %% || LIKE ILIKE", strings.Join(op, "."))
	}
	return nil
}

// pgLockTraits reads a statement's readOnly and waitsHoldingNothing (see
// pgPlan), for settle's deadlock wait (pgsession.go).
func pgLockTraits(stmt *pg_query.Node) (readOnly, waitsHoldingNothing bool) {
	var locks, nested bool
	var visit func(m protoreflect.Message)
	visit = func(m protoreflect.Message) {
		switch x := m.Interface().(type) {
		case *pg_query.LockingClause:
			locks = true
		case *pg_query.FuncCall:
			// An advisory lock, or (with the parser off) a function off
			// the list, which may take one.
			if fn := names(x.Funcname); len(fn) != 1 || strings.Contains(fn[0], "advisory") || !contains(pgFunctions, fn[0]) {
				locks = true
			}
		case *pg_query.SubLink, *pg_query.WithClause, *pg_query.RangeSubselect:
			nested = true
		}
		m.Range(func(fd protoreflect.FieldDescriptor, v protoreflect.Value) bool {
			if fd.IsList() && fd.Message() != nil {
				for i := 0; i < v.List().Len(); i++ {
					visit(v.List().Get(i).Message())
				}
			} else if fd.Message() != nil && !fd.IsMap() {
				visit(v.Message())
			}
			return true
		})
	}
	visit(stmt.ProtoReflect())
	if stmt.GetTransactionStmt() != nil {
		return true, false // BEGIN takes no lock; COMMIT and ROLLBACK end the transaction
	}
	if sel := stmt.GetSelectStmt(); sel != nil {
		readOnly = !locks && !nested
		waitsHoldingNothing = !nested && len(sel.FromClause) == 0 && sel.Op == pg_query.SetOperation_SETOP_NONE
	}
	if ins := stmt.GetInsertStmt(); ins != nil && !nested {
		sel := ins.SelectStmt.GetSelectStmt()
		waitsHoldingNothing = sel != nil && len(sel.ValuesLists) == 1
	}
	return readOnly, waitsHoldingNothing
}
