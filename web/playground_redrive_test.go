package web

import (
	"net/url"
	"strings"
	"testing"

	"github.com/PuerkitoBio/goquery"
)

// dlqBeforeRedrive is dlq-redrive's default script up to the redrive:
// pay-1 is in the dead-letter queue and the dedupe rows are pruned.
const dlqBeforeRedrive = "deliver pay-1 lose-ack; redeliver pay-1 lose-ack; redeliver pay-1 lose-ack; redeliver pay-1; advance 168; prune"

func dlqURL(script string) string {
	return "/playground?" + url.Values{"scenario": {"dlq-redrive"}, "script": {script}}.Encode()
}

// TestPlaygroundControls_RedriveBringsTheMessageBack: the Redrive control
// is a plain link, shown only while the message is in the dead-letter
// queue; following it (twice, as a double click would) adds one redrive
// event to the URL, and the message comes back: delivered again, applied a
// second time by dedupe-tx, whose ids were pruned.
func TestPlaygroundControls_RedriveBringsTheMessageBack(t *testing.T) {
	s := newTestServer(t, Config{})
	h := s.Handler()
	redriveOf := func(doc *goquery.Document) *goquery.Selection {
		return doc.Find(testID("playground") + ` [data-message="pay-1"] ` + testID("pg-redrive"))
	}
	status := func(doc *goquery.Document) string {
		return strings.TrimSpace(doc.Find(testID("playground") + ` [data-message="pay-1"] ` + testID("pg-message-status")).Text())
	}

	// Not dead-lettered: no Redrive control at all.
	for _, script := range []string{"deliver pay-1", "deliver pay-1 lose-ack; redeliver pay-1 lose-ack"} {
		if n := redriveOf(document(t, do(t, h, "GET", dlqURL(script)))).Length(); n != 0 {
			t.Errorf("%q: %d Redrive controls for a message that is not dead-lettered", script, n)
		}
	}

	doc := document(t, do(t, h, "GET", dlqURL(dlqBeforeRedrive)))
	link := redriveOf(doc)
	href, ok := link.Attr("href")
	if link.Length() != 1 || !ok || !link.Is("a") {
		t.Fatalf("want one Redrive link on pay-1, got %d (%s)", link.Length(), goquery.NodeName(link))
	}
	if !strings.Contains(status(doc), "dead") {
		t.Errorf("before the redrive pay-1 reads %q", status(doc))
	}
	if got := strings.TrimSpace(link.Text()); got != "Redrive" {
		t.Errorf("the control reads %q", got)
	}
	var after string
	for i := range 2 { // a double click: the URL is the state, the same state twice
		resp := do(t, h, "GET", strings.SplitN(href, "#", 2)[0])
		if resp.StatusCode != 200 {
			t.Fatalf("following Redrive answers %d", resp.StatusCode)
		}
		next := document(t, resp)
		pg := next.Find(testID("playground"))
		if got := pg.AttrOr("data-script", ""); got != dlqBeforeRedrive+"; redrive pay-1" {
			t.Fatalf("after Redrive (%d) the script is %q", i+1, got)
		}
		if strings.Contains(status(next), "dead") {
			t.Errorf("after Redrive pay-1 still reads %q", status(next))
		}
		if redriveOf(next).Length() != 0 {
			t.Error("Redrive is still offered for a message back in the queue")
		}
		v := pg.Find(testID("pg-verdict") + `[data-handler="dedupe-tx"]`)
		if got := v.AttrOr("data-verdict", ""); got != "duplicate-effect" {
			t.Errorf("after the redrive dedupe-tx is %q, want duplicate-effect: its id was pruned", got)
		}
		html, _ := pg.Html()
		if i == 1 && html != after {
			t.Error("following the same Redrive link twice gave two different pages")
		}
		after = html
	}
}
