package playview

import (
	"bytes"
	"context"
	"html"
	"testing"

	"github.com/a-h/templ"
)

func TestMarkup_EscapesAsTempl(t *testing.T) {
	for _, s := range []string{"", "plain", `<script>"x"</script>`, "a & b", "it's", "⚑ ünïcode", "&amp;", `<`, `a<b>c&d'e"f`, `""`, "x>"} {
		m := &Markup{}
		m.Attr("aria-label", s)
		m.Text(s)
		want := ` aria-label="` + templ.EscapeString(s) + `"` + templ.EscapeString(s)
		if got := string(m.B); got != want {
			t.Errorf("%q: got %s, want %s", s, got, want)
		}
	}
}

func TestMarkup_ComponentWritesNumbersAndFlags(t *testing.T) {
	c := markupComponent(func(m *Markup) {
		m.Raw("<g")
		m.IntAttr("y", -12)
		m.Flag("data-on", true)
		m.Flag("data-off", false)
		m.Raw(">")
	})
	var buf bytes.Buffer
	if err := c.Render(context.Background(), &buf); err != nil {
		t.Fatal(err)
	}
	if got, want := buf.String(), `<g y="-12" data-on>`; got != want {
		t.Errorf("got %s, want %s", got, want)
	}
}

// FuzzMarkup_EscapesAsHTML: markup's escaping, which appends in place, is
// html.EscapeString's (templ's) for any text.
func FuzzMarkup_EscapesAsHTML(f *testing.F) {
	for _, s := range []string{"", "plain", `<script>"x"</script>`, "a & b", "it's", "⚑ ünïcode", "&amp;", "\xff<"} {
		f.Add(s)
	}
	f.Fuzz(func(t *testing.T, s string) {
		if got, want := string(appendEscaped([]byte("x"), s)), "x"+html.EscapeString(s); got != want {
			t.Errorf("%q: got %q, want %q", s, got, want)
		}
	})
}
