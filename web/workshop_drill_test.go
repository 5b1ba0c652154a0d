package web

import (
	"net/http"
	"net/url"
	"strconv"
	"strings"
	"testing"

	"github.com/PuerkitoBio/goquery"

	"idemlab/web/workshopweb"
	"idemlab/workshop"
)

func TestWorkshop_DrillDownRenameAndRemove(t *testing.T) {
	ws := newWorkshopSite(t, nil)
	inst := ws.instructor(t)
	id, code := ws.createRoom(t, inst, "form-key-room-1")
	room, _ := ws.store.Room(t.Context(), id)
	ex := room.Exercises[0]
	spec := builtinExercise(t, ex)
	ada := ws.join(t, code, "Ada")
	if resp := post(t, ws.client(t), ws.srv.URL+"/join", url.Values{"key": {"join-key-second-ada"}, "code": {string(code)}, "name": {"Ada"}}); resp.StatusCode != http.StatusSeeOther {
		t.Fatalf("another Ada: %d", resp.StatusCode) // told apart below
	}
	doc := ws.classDoc(t, inst, id)
	var names []string
	doc.Find(testID("ws-row-name")).Each(func(_ int, s *goquery.Selection) { names = append(names, s.Text()) })
	if strings.Join(names, "|") != "Ada|Ada (2)" && strings.Join(names, "|") != "Ada (2)|Ada" {
		t.Errorf("rows %q, want Ada and Ada (2)", names)
	}
	ws.check(t, ada, ex, spec.Start, false)
	ws.check(t, ada, ex, spec.Solution, true)
	learners, _ := ws.store.Learners(t.Context(), id)
	adaID, ada2ID := learners[0].ID, learners[1].ID
	drill := ws.srv.URL + workshopweb.LearnerPath(id, adaID)
	if href := ws.classDoc(t, inst, id).Find(`tr[data-learner="`+strconv.FormatInt(adaID, 10)+`"] `+testID("ws-row-drill")).AttrOr("href", ""); href != workshopweb.LearnerPath(id, adaID) {
		t.Errorf("the row links %q, want the drill-down", href)
	}
	resp := get(t, inst, drill)
	d, err := goquery.NewDocumentFromReader(resp.Body)
	if err != nil || resp.StatusCode != http.StatusOK {
		t.Fatalf("drill-down: %d %v", resp.StatusCode, err)
	}
	attempts := d.Find(testID("ws-drill-attempt"))
	if attempts.Length() != 2 || attempts.First().AttrOr("data-passed", "") != "false" || attempts.Last().AttrOr("data-passed", "") != "true" ||
		attempts.First().Find("pre").Length() != 1 || d.Find(testID("ws-drill-replay")).Length() != 2 {
		t.Errorf("drill-down attempts: %d, want a failure with its counterexample then a pass, each with a replay link", attempts.Length())
	}
	if h := d.Find(testID("ws-drill-handler")).Text(); h != strings.TrimSpace(spec.Solution) {
		t.Errorf("latest handler %q, want the solution", h)
	}
	replay := d.Find(testID("ws-drill-replay")).First().AttrOr("href", "")
	if resp := get(t, inst, ws.srv.URL+replay); resp.StatusCode != http.StatusOK {
		t.Errorf("replay %s: %d", replay, resp.StatusCode)
	}
	// A learner sees no drill-down.
	if resp := get(t, ada, drill); resp.StatusCode != http.StatusForbidden {
		t.Errorf("a learner's drill-down: %d, want 403", resp.StatusCode)
	}
	// Rename, retried: one rename.
	rename := ws.srv.URL + workshopweb.LearnerPath(id, ada2ID) + "/rename"
	for range 2 {
		if resp := post(t, inst, rename, url.Values{"key": {"form-key-rename-1"}, "name": {"Grace"}}); resp.StatusCode != http.StatusSeeOther {
			t.Fatalf("rename: %d %s", resp.StatusCode, readBody(t, resp))
		}
	}
	// From another origin: refused.
	req, _ := http.NewRequest("POST", rename, strings.NewReader("name=Mallory"))
	req.Header.Set("Content-Type", "application/x-www-form-urlencoded")
	req.Header.Set("Origin", "https://evil.example")
	req.Header.Set("Sec-Fetch-Site", "cross-site")
	if resp, err := inst.Do(req); err != nil || resp.StatusCode != http.StatusForbidden {
		t.Errorf("a cross-origin rename: %v %v, want 403", resp.StatusCode, err)
	} else {
		resp.Body.Close()
	}
	// Remove, retried: one removal, and Ada's seat stops working.
	for range 2 {
		if resp := post(t, inst, drill+"/remove", url.Values{"confirm": {"yes"}}); resp.StatusCode != http.StatusSeeOther {
			t.Fatalf("remove: %d %s", resp.StatusCode, readBody(t, resp))
		}
	}
	evs, _ := ws.store.Events(t.Context(), id, 0, false, 100)
	counts := map[workshop.Kind]int{}
	for _, e := range evs {
		counts[e.Kind]++
	}
	if counts[workshop.KindRenamed] != 1 || counts[workshop.KindRemoved] != 1 {
		t.Errorf("events %v, want one rename and one removal", counts)
	}
	names = nil
	ws.classDoc(t, inst, id).Find(testID("ws-row-name")).Each(func(_ int, s *goquery.Selection) { names = append(names, s.Text()) })
	if strings.Join(names, "|") != "Grace" {
		t.Errorf("rows after rename and removal: %q, want Grace", names)
	}
	if resp := get(t, ada, ws.srv.URL+"/api/v1/room"); resp.StatusCode != http.StatusUnauthorized {
		t.Errorf("a removed learner: %d, want 401", resp.StatusCode)
	}
	if resp := get(t, inst, drill); resp.StatusCode != http.StatusNotFound {
		t.Errorf("a removed learner's drill-down: %d, want 404", resp.StatusCode)
	}
}
