package web

import (
	"net/http"
	"net/url"
	"strings"
	"testing"
)

// A partition scenario offers Poll and Rebalance in its Messages panel, each
// a link that adds its event, or disabled with the engine's reason; its
// records have no Deliver controls, since a partition is read by polling.
func TestPlaygroundControls_PartitionPollAndRebalance(t *testing.T) {
	h := newTestServer(t, Config{}).Handler()
	resp := do(t, h, "GET", "/playground?scenario=partition-crash&script=poll&open=broker")
	if resp.StatusCode != http.StatusOK {
		t.Fatalf("status %d", resp.StatusCode)
	}
	doc := document(t, resp)
	poll := doc.Find(testID("pg-poll"))
	u, err := url.Parse(poll.AttrOr("href", ""))
	if poll.Length() != 1 || !poll.Is("a[href]") || err != nil || u.Query().Get("script") != "poll; poll" {
		t.Fatalf("Poll control: %d, href %q", poll.Length(), poll.AttrOr("href", ""))
	}
	if rb := doc.Find(testID("pg-rebalance")); rb.Length() != 1 || !rb.Is("a[href]") {
		t.Fatalf("Rebalance control: %d", rb.Length())
	}
	// Poll and Rebalance are where a queue's Deliver controls are, with no
	// panel to open; the records list no controls that cannot apply.
	if n := doc.Find(testID("pg-partition-controls") + " " + testID("pg-poll")).Length(); n != 1 {
		t.Errorf("Poll is not among the Messages panel's controls (%d)", n)
	}
	if n := doc.Find(testID("pg-message") + " " + testID("pg-deliver") + ", " + testID("pg-message") + " " + testID("pg-publish")).Length(); n != 0 {
		t.Errorf("the partition's records offer %d Deliver or Publish controls, none of which applies", n)
	}
	if n := document(t, do(t, newCourseServer(t, Config{}).Handler(), "GET", "/lessons/offsets-and-exactly-once")).Find("#pg-1 " + testID("pg-poll")).Length(); n != 1 {
		t.Errorf("lesson 17's first playground offers %d Poll controls without opening a panel, want 1", n)
	}

	// Following Poll plays the next batch.
	next := do(t, h, "GET", poll.AttrOr("href", ""))
	if next.StatusCode != http.StatusOK {
		t.Fatalf("after Poll: status %d", next.StatusCode)
	}
	if body := document(t, next).Text(); !strings.Contains(body, "rec-4") {
		t.Errorf("after Poll the page never names rec-4")
	}

	// After the owner crashed, Poll is refused until a rebalance.
	doc = document(t, do(t, h, "GET", "/playground?scenario=partition-crash&script=poll+crash-at+1&open=broker"))
	poll = doc.Find(testID("pg-poll"))
	if poll.Is("a") || !strings.Contains(poll.AttrOr("data-reason", ""), "no live consumer owns payments-0") {
		t.Errorf("Poll after a crash: %q", poll.AttrOr("data-reason", ""))
	}

	// A queue scenario has neither.
	doc = document(t, do(t, h, "GET", "/playground?scenario=lost-ack&open=broker"))
	if n := doc.Find(testID("pg-poll")).Length() + doc.Find(testID("pg-rebalance")).Length(); n != 0 {
		t.Errorf("lost-ack offers %d partition controls", n)
	}
}
