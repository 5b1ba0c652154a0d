package web

import (
	"net/url"
	"strings"
	"testing"

	"github.com/PuerkitoBio/goquery"
)

// TestPlaygroundBackoff_DiagramShowsTheGrowingGaps: on a broker with a
// redelivery backoff, the sequence diagram marks each copy held back with
// its delay and the tick it is due, and each redelivery's clock jump, so
// the doubling gaps read down the broker's lane; a refused charge is a
// cross with the provider's answer, and the message panel says the copy is
// held back.
func TestPlaygroundBackoff_DiagramShowsTheGrowingGaps(t *testing.T) {
	h := newTestServer(t, Config{}).Handler()
	target := "/playground?scenario=outage-backoff&script=" + url.QueryEscape("deliver pay-1; redeliver pay-1; redeliver pay-1") + "&show=diagram"
	doc := document(t, do(t, h, "GET", target))
	var labels []string
	doc.Find("svg text").Each(func(_ int, s *goquery.Selection) {
		if l := s.Text(); strings.Contains(l, "held back") || strings.HasPrefix(l, "clock") || strings.HasPrefix(l, "provider") {
			labels = append(labels, l)
		}
	})
	want := []string{
		"provider: 503 Service Unavailable: the provider is down until tick…",
		"pay-1 held back: 5 seconds, until tick 5",
		"clock → 5",
		"provider: 503 Service Unavailable: the provider is down until tick…",
		"pay-1 held back: 10 seconds, until tick 15",
		"clock → 15",
		"provider: 503 Service Unavailable: the provider is down until tick…",
		"pay-1 held back: 20 seconds, until tick 35",
	}
	if strings.Join(labels, "\n") != strings.Join(want, "\n") {
		t.Errorf("diagram labels:\n%s\nwant:\n%s", strings.Join(labels, "\n"), strings.Join(want, "\n"))
	}
	if body := doc.Text(); !strings.Contains(body, "held back until its redelivery delay ends") {
		t.Error("the message panel does not say pay-1 is held back")
	}
}
