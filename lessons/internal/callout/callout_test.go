package callout

import (
	"bytes"
	"testing"

	"github.com/yuin/goldmark"
)

func TestCallout_Rendering(t *testing.T) {
	md := goldmark.New(goldmark.WithExtensions(New()))
	cases := []struct{ name, in, want string }{
		{"Note", "> [!NOTE]\n> Text.\n",
			"<aside class=\"callout callout-note\" role=\"note\">\n<p class=\"callout-title\">Note</p>\n<p>Text.</p>\n</aside>\n"},
		{"LowercaseMarker", "> [!tip]\n> Text.\n",
			"<aside class=\"callout callout-tip\" role=\"note\">\n<p class=\"callout-title\">Tip</p>\n<p>Text.</p>\n</aside>\n"},
		{"MarkerAloneThenParagraphs", "> [!WARNING]\n>\n> One.\n>\n> Two.\n",
			"<aside class=\"callout callout-warning\" role=\"note\">\n<p class=\"callout-title\">Warning</p>\n<p>One.</p>\n<p>Two.</p>\n</aside>\n"},
		{"MarkerOnlyIsAnEmptyCallout", "> [!NOTE]\n",
			"<aside class=\"callout callout-note\" role=\"note\">\n<p class=\"callout-title\">Note</p>\n</aside>\n"},
		{"UnknownMarkerStaysAQuote", "> [!CAUTION]\n> Text.\n",
			"<blockquote>\n<p>[!CAUTION]\nText.</p>\n</blockquote>\n"},
		{"MarkerWithTextAfterStaysAQuote", "> [!NOTE] Title\n> Text.\n",
			"<blockquote>\n<p>[!NOTE] Title\nText.</p>\n</blockquote>\n"},
		{"NestedInAList", "- item\n\n  > [!TIP]\n  > Inside.\n",
			"<ul>\n<li>\n<p>item</p>\n<aside class=\"callout callout-tip\" role=\"note\">\n<p class=\"callout-title\">Tip</p>\n<p>Inside.</p>\n</aside>\n</li>\n</ul>\n"},
		{"InlineMarkupAfterMarker", "> [!NOTE]\n> Use *this*.\n",
			"<aside class=\"callout callout-note\" role=\"note\">\n<p class=\"callout-title\">Note</p>\n<p>Use <em>this</em>.</p>\n</aside>\n"},
	}
	for _, tc := range cases {
		t.Run(tc.name, func(t *testing.T) {
			var out bytes.Buffer
			if err := md.Convert([]byte(tc.in), &out); err != nil {
				t.Fatal(err)
			}
			if out.String() != tc.want {
				t.Errorf("got:\n%s\nwant:\n%s", out.String(), tc.want)
			}
		})
	}
}
