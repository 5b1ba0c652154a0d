package web

import (
	"os"
	"path/filepath"
	"testing"

	"github.com/chromedp/chromedp"

	"idemlab/internal/browsertest"
	"idemlab/web/site"
)

// envAxeDir names the npm prefix holding axe-core (npm install --prefix DIR
// axe-core@4.14); by default the user's cache, where .ci/run installs it.
const envAxeDir = "IDEMLAB_AXE_DIR"

// axeSource reads axe-core's script, or skips the test (fails it when
// browser tests are required, as in CI).
func axeSource(t *testing.T) string {
	t.Helper()
	dir := os.Getenv(envAxeDir)
	if dir == "" {
		cache, err := os.UserCacheDir()
		if err != nil {
			t.Skipf("no cache dir for axe-core: %v", err)
		}
		dir = filepath.Join(cache, "idemlab", "axe")
	}
	src, err := os.ReadFile(filepath.Join(dir, "node_modules", "axe-core", "axe.min.js"))
	if err != nil {
		msg := "axe-core is not installed: npm install --prefix " + dir + " axe-core@4.14 (or set " + envAxeDir + "): " + err.Error()
		if browsertest.Required() {
			t.Fatal(msg)
		}
		t.Skip(msg)
	}
	return string(src)
}

// axeSerious runs axe on the page (its source is evaluated through the
// DevTools protocol: the site's CSP rightly refuses an injected <script>)
// and returns the serious and critical violations, one line each.
const axeSerious = `axe.run(document, {resultTypes: ["violations"]}).then(r => r.violations
	.filter(v => v.impact === "serious" || v.impact === "critical")
	.map(v => v.impact + " " + v.id + ": " + v.help + " at " + v.nodes.slice(0, 3).map(n => n.target.join(" ")).join(" | ")))`

// Every page type, light and dark: no serious or critical violation. One
// browser per scheme keeps each within the harness's time limit.
func TestBrowser_AxeFindsNothingSerious_Light(t *testing.T) { axeEveryPage(t, "light") }
func TestBrowser_AxeFindsNothingSerious_Dark(t *testing.T)  { axeEveryPage(t, "dark") }

func axeEveryPage(t *testing.T, scheme string) {
	src := axeSource(t)
	ctx := browsertest.New(t)
	srv := startCourseServer(t, Config{})
	pages := []struct{ name, path, ready string }{
		{"index", "/", `[data-testid="lesson-list"]`},
		{"lesson with playgrounds", "/lessons/" + lostAckSlug, `#pg-1`},
		{"full playground", "/playground?scenario=lost-ack", `#playground`},
		{"playground with a problem", "/lessons/" + lostAckSlug + "?pg=pg-1&script=delivr", `[data-testid="pg-problem"]`},
		{"error page", "/lessons/no-such-lesson", `[data-testid="error-message"]`},
		{"embed", "/embed/lessons/" + lostAckSlug, `#pg-1`},
		{"embedded playground", "/embed/playground?scenario=lost-ack", `#playground`},
	}
	check := func(name string) {
		if _, err := chromedp.Run(ctx, chromedp.Evaluate[bool](src+";true")); err != nil {
			t.Fatalf("loading axe: %v", err)
		}
		found, err := chromedp.Run(ctx, chromedp.Evaluate[[]string](axeSerious, chromedp.EvalAwaitPromise))
		if err != nil {
			t.Fatalf("%s (%s): running axe: %v", name, scheme, err)
		}
		for _, v := range found {
			t.Errorf("%s (%s): %s", name, scheme, v)
		}
	}
	for _, p := range pages {
		run(t, ctx, browsertest.ColorScheme(scheme), chromedp.Navigate(srv.URL+p.path))
		waitFor(t, ctx, p.ready)
		check(p.name)
	}
	// An exercise whose starting handler is checked: a counterexample.
	spec := builtinExercise(t, "dedupe-credit")
	run(t, ctx, chromedp.Navigate(srv.URL+site.ExercisePath(spec.ID)))
	exClick(t, ctx, `[data-exercise="`+spec.ID+`"] [data-testid="exercise-check"]`)
	exWait(t, ctx, "the counterexample", exResultState(spec.ID)+` === "fail"`)
	check("exercise with a counterexample")
}
