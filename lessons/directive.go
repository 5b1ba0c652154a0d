package lessons

import (
	"fmt"
	"io/fs"
)

// A Directive gives meaning to one kind of fenced block: ```KIND … ```.
// The built-in "playground" directive produces Block.Playground; later
// features (```exercise, a Go-file include) register their own through
// Options.Directives instead of changing the renderer.
type Directive struct {
	// Kind is the first word of the fence's info string, e.g. "exercise".
	Kind string
	// Parse validates one block. It returns either inline HTML that takes
	// the block's place in the surrounding markdown (an include directive
	// that highlights a file) or a Value that becomes a Block of its own
	// (Block.Directive), rendered by the web layer's component for Kind.
	//
	// A returned error is reported as a problem: a Problem or *LoadError keeps
	// its own lines (see DirectiveSource.Problem), a *FieldError or any other
	// error is placed on the opening fence. Errors joined with errors.Join
	// are reported one by one.
	Parse func(src *DirectiveSource) (DirectiveOutput, error)
}

// DirectiveSource is what a Directive sees of one fenced block.
type DirectiveSource struct {
	Kind   string
	Info   string // the rest of the info string after Kind, trimmed
	Body   []byte // the block's content
	File   string // the lesson file as named in messages
	Line   int    // file line of the opening fence; Body starts on Line+1
	Index  int    // 1-based position among the lesson's blocks of this Kind
	Lesson string // slug of the lesson
	FS     fs.FS  // the lessons folder, for directives that include files
}

// Problem returns a problem at line bodyLine (1-based) of the block's body,
// for a Parse function to return.
func (s *DirectiveSource) Problem(bodyLine int, format string, args ...any) Problem {
	return Problem{File: s.File, Line: s.Line + bodyLine, Msg: fmt.Sprintf(format, args...)}
}

// DirectiveOutput is what a Directive produces: exactly one of HTML or Value.
type DirectiveOutput struct {
	HTML  string // inline, safe HTML (escape what comes from the file)
	Value any    // a Block of its own; the block must then be at the top level of the lesson
}

// DirectiveBlock is a block produced by a directive other than playground.
type DirectiveBlock struct {
	Kind  string
	Value any
	File  string
	Line  int
}

// playgroundDirective is the built-in ```playground directive: structural
// checks, then the caller's hook for engine-level checks.
func playgroundDirective(check func(*PlaygroundSpec) error) Directive {
	return Directive{
		Kind: "playground",
		Parse: func(src *DirectiveSource) (DirectiveOutput, error) {
			spec, err := ParsePlaygroundSpec(src.Body, src.File, src.Line)
			if err != nil {
				return DirectiveOutput{}, err
			}
			spec.ID = fmt.Sprintf("pg-%d", src.Index)
			if check != nil {
				if problems := problemsFromError(check(spec), src.File, src.Line, spec.FieldLine); len(problems) > 0 {
					return DirectiveOutput{}, &LoadError{Problems: problems}
				}
			}
			return DirectiveOutput{Value: spec}, nil
		},
	}
}

// directiveTable indexes the built-in and the caller's directives by kind.
func directiveTable(opts Options) (map[string]Directive, error) {
	check := opts.CheckPlayground
	if check == nil {
		check = CheckWithEngine
	}
	table := map[string]Directive{"playground": playgroundDirective(check)}
	for _, d := range opts.Directives {
		if d.Kind == "" || d.Parse == nil {
			return nil, fmt.Errorf("lessons: directive %q needs a Kind and a Parse function", d.Kind)
		}
		if _, dup := table[d.Kind]; dup || d.Kind == "quiz" || d.Kind == "exercise" {
			return nil, fmt.Errorf("lessons: directive %q is defined twice (playground, exercise and quiz are built in)", d.Kind)
		}
		table[d.Kind] = d
	}
	return table, nil
}
