package lessons

import (
	"fmt"
	"io/fs"
)

// A Directive gives meaning to one kind of fenced block: ```KIND … ```.
// The built-in ones are playground, exercise and quiz (builtinDirectives);
// a caller adds its own through Options.Directives, without changing the
// renderer. Both are registered the same way, by directiveTable.
type Directive struct {
	// Kind is the first word of the fence's info string, e.g. "exercise".
	Kind string
	// Parse validates one block. It returns either inline HTML that takes
	// the block's place in the surrounding markdown (an include directive
	// that highlights a file, a quiz) or a Value that becomes a Block of its
	// own. The site draws only the values Block has a field for (a
	// *PlaygroundSpec, an *ExerciseSpec); any other value, or an output
	// with neither HTML nor Value, is reported as a problem on the block
	// rather than silently dropped.
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

// playgroundDirective is the built-in ```playground directive: structural
// checks, then the caller's hook for engine-level checks.
func (l *loader) playgroundDirective(check func(*PlaygroundSpec) error) Directive {
	return Directive{
		Kind: "playground",
		Parse: func(src *DirectiveSource) (DirectiveOutput, error) {
			spec, err := ParsePlaygroundSpec(src.Body, src.File, src.Line)
			if err != nil {
				return DirectiveOutput{}, err
			}
			spec.ID = fmt.Sprintf("pg-%d", src.Index)
			if spec.Ledger != "" {
				spec.recordingPath = RecordingPath(src.Lesson, spec.ID)
				if spec.Recorded, err = loadRecording(src.FS, spec.recordingPath); err != nil {
					return DirectiveOutput{}, &LoadError{Problems: problemsFromError(err, src.File, src.Line, spec.FieldLine)}
				}
			}
			if err := l.renderBlockText(spec, src); err != nil {
				return DirectiveOutput{}, err
			}
			if check != nil {
				if problems := problemsFromError(check(spec), src.File, src.Line, spec.FieldLine); len(problems) > 0 {
					return DirectiveOutput{}, &LoadError{Problems: problems}
				}
			}
			return DirectiveOutput{Value: spec}, nil
		},
	}
}

// builtinDirectives are the fenced block kinds every course has.
func (l *loader) builtinDirectives() []Directive {
	check := l.opts.CheckPlayground
	if check == nil {
		check = CheckWithEngineOn(l.opts.Ledgers)
	}
	return []Directive{l.playgroundDirective(check), l.exerciseDirective(), l.quizDirective()}
}

// directiveTable registers the built-in directives, then the caller's, by
// kind: the one place a directive is added. A kind defined twice, or a
// directive without Kind or Parse, is a misconfiguration.
func (l *loader) directiveTable() (map[string]Directive, error) {
	builtin := l.builtinDirectives()
	table := make(map[string]Directive, len(builtin)+len(l.opts.Directives))
	for _, d := range append(builtin, l.opts.Directives...) {
		if d.Kind == "" || d.Parse == nil {
			return nil, fmt.Errorf("lessons: directive %q needs a Kind and a Parse function", d.Kind)
		}
		if _, dup := table[d.Kind]; dup {
			kinds := make([]string, len(builtin))
			for j, b := range builtin {
				kinds[j] = b.Kind
			}
			return nil, fmt.Errorf("lessons: directive %q is defined twice (%s are built in)", d.Kind, joinWords(kinds, "and"))
		}
		table[d.Kind] = d
	}
	return table, nil
}

// blockOf turns a directive's value into the Block the site draws, or
// reports that the site has no way to draw it.
func blockOf(kind string, value any) (Block, error) {
	switch v := value.(type) {
	case *PlaygroundSpec:
		return Block{Playground: v}, nil
	case *ExerciseSpec:
		return Block{Exercise: v}, nil
	}
	return Block{}, fmt.Errorf("```%s: the site cannot draw a block of type %T (a directive of its own may only return HTML)", kind, value)
}
