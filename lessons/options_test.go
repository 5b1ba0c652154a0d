package lessons

import (
	"errors"
	"fmt"
	"html"
	"strings"
	"testing"
	"testing/fstest"
)

const hookLesson = "---\ntitle: A\nsummary: S.\norder: 1\nminutes: 1\nobjectives: [O.]\n---\n\n" + // lines 1-8
	"```playground\n" + // 9
	"scenario: lost-ack\n" + // 10
	"handlers: [increment]\n" + // 11
	"script: deliver msg-1\n" + // 12
	"caption: C.\n" + // 13
	"```\n"

func TestLoad_CheckPlaygroundHook(t *testing.T) {
	cases := []struct {
		name string
		err  error
		want string
	}{
		{"FieldErrorPointsAtTheField", &FieldError{Field: "script", Err: errors.New(`event 1: unknown message "msg-1"`)},
			`lessons/01-a.md:12: script: event 1: unknown message "msg-1"`},
		{"PlainErrorPointsAtTheFence", errors.New(`unknown scenario "lost-ack"`),
			`lessons/01-a.md:9: unknown scenario "lost-ack"`},
		{"JoinedErrorsAreListedOneByOne", errors.Join(&FieldError{Field: "scenario", Err: errors.New("unknown")}, &FieldError{Field: "handlers", Err: errors.New("unknown")}),
			"lessons/01-a.md:10: scenario: unknown\nlessons/01-a.md:11: handlers: unknown"},
		{"ProblemKeepsItsLine", Problem{Line: 13, Msg: "caption too long"},
			"lessons/01-a.md:13: caption too long"},
	}
	for _, tc := range cases {
		t.Run(tc.name, func(t *testing.T) {
			var seen *PlaygroundSpec
			_, err := Load(fstest.MapFS{"01-a.md": {Data: []byte(hookLesson)}}, Options{
				DisplayRoot: "lessons",
				CheckPlayground: func(spec *PlaygroundSpec) error {
					seen = spec
					return tc.err
				},
			})
			if err == nil || err.Error() != tc.want {
				t.Errorf("got error:\n%v\nwant:\n%s", err, tc.want)
			}
			if seen == nil || seen.Scenario != "lost-ack" || seen.ID != "pg-1" || seen.File != "lessons/01-a.md" || seen.Line != 9 {
				t.Errorf("hook saw %+v", seen)
			}
		})
	}
	t.Run("NilErrorLoads", func(t *testing.T) {
		course, err := Load(fstest.MapFS{"01-a.md": {Data: []byte(hookLesson)}}, Options{
			CheckPlayground: func(*PlaygroundSpec) error { return nil },
		})
		if err != nil || len(course.Lessons[0].Playgrounds) != 1 {
			t.Fatalf("Load: %v", err)
		}
	})
}

// shoutDirective is a test directive: "inline" info returns HTML in place,
// "value" a value of a type the site cannot draw, "nothing" neither.
var shoutDirective = Directive{
	Kind: "shout",
	Parse: func(src *DirectiveSource) (DirectiveOutput, error) {
		text := strings.TrimSpace(string(src.Body))
		switch {
		case text == "":
			return DirectiveOutput{}, src.Problem(1, "shout: nothing to shout")
		case text == "panic":
			panic("directive bug")
		case src.Info == "value":
			return DirectiveOutput{Value: strings.ToUpper(text)}, nil
		case src.Info == "nothing":
			return DirectiveOutput{}, nil
		}
		return DirectiveOutput{HTML: fmt.Sprintf("<p><strong>%s#%d: %s</strong></p>\n", src.Lesson, src.Index, html.EscapeString(strings.ToUpper(text)))}, nil
	},
}

func TestLoad_Directives(t *testing.T) {
	body := "Before.\n\n```shout\nhi <b>\n```\n\n> ```shout\n> nested\n> ```\n\nAfter.\n"
	course, err := Load(fstest.MapFS{"01-a.md": {Data: []byte(minimalLesson("A", 1, body))}}, Options{Directives: []Directive{shoutDirective}})
	if err != nil {
		t.Fatal(err)
	}
	var got []string
	for _, b := range course.Lessons[0].Body {
		got = append(got, b.HTML)
	}
	want := "<p>Before.</p>\n<p><strong>a#1: HI &lt;B&gt;</strong></p>\n<blockquote>\n<p><strong>a#2: NESTED</strong></p>\n</blockquote>\n<p>After.</p>\n"
	if strings.Join(got, "|") != want {
		t.Errorf("body:\n%q\nwant:\n%q", got, want)
	}

	// A block the site cannot draw is a problem on its fence, never dropped.
	errorCases := []struct{ name, body, want string }{
		{"ProblemFromParse", "```shout\n\n```\n", "01-a.md:10: shout: nothing to shout"},
		{"PanicBecomesAProblem", "```shout\npanic\n```\n", "01-a.md:9: ```shout directive failed: directive bug"},
		{"ValueTheSiteCannotDraw", "```shout value\nx\n```\n", "01-a.md:9: ```shout: the site cannot draw a block of type string (a directive of its own may only return HTML)"},
		{"NestedValueTheSiteCannotDraw", "> ```shout value\n> x\n> ```\n", "01-a.md:9: ```shout: the site cannot draw a block of type string (a directive of its own may only return HTML)"},
		{"NothingToShow", "Text.\n\n```shout nothing\nx\n```\n", "01-a.md:11: ```shout: the block produced nothing to show"},
		{"TypoOfACustomKind", "```shoot\nx\n```\n", "01-a.md:9: unknown code block kind \"shoot\": did you mean \"shout\"?"},
	}
	for _, tc := range errorCases {
		t.Run(tc.name, func(t *testing.T) {
			_, err := Load(fstest.MapFS{"01-a.md": {Data: []byte(minimalLesson("A", 1, tc.body))}}, Options{Directives: []Directive{shoutDirective}})
			got := ""
			if err != nil {
				got = err.Error()
			}
			if got != tc.want {
				t.Errorf("got %q, want %q", got, tc.want)
			}
		})
	}
}

func TestLoad_MisconfiguredDirectives(t *testing.T) {
	for name, d := range map[string]Directive{
		"Playground is built in": {Kind: "playground", Parse: shoutDirective.Parse},
		"Exercise is built in":   {Kind: "exercise", Parse: shoutDirective.Parse},
		"Quiz is built in":       {Kind: "quiz", Parse: shoutDirective.Parse},
		"Defined twice":          {Kind: "shout", Parse: shoutDirective.Parse},
		"Parse missing":          {Kind: "x"},
		"Kind missing":           {Parse: shoutDirective.Parse},
	} {
		_, err := Load(Embedded(), Options{Directives: []Directive{shoutDirective, d}})
		var loadErr *LoadError
		if err == nil || errors.As(err, &loadErr) {
			t.Errorf("%s: got %v, want a configuration error", name, err)
		}
	}
}
