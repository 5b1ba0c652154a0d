// Idemlab: loaded synchronously in <head> so the saved theme applies before
// the first paint (no flash of the wrong theme). Kept tiny on purpose.
// A ?theme=light|dark query (for iframes matching their host page) wins over
// the saved choice without replacing it.
(function () {
  var root = document.documentElement;
  root.classList.add("js");
  var theme = null;
  var asked = /[?&]theme=(light|dark)(?:&|$)/.exec(window.location.search);
  if (asked) {
    theme = asked[1];
  } else {
    try {
      theme = window.localStorage.getItem("idemlab.theme");
    } catch (e) {
      // Storage may be blocked (private mode, sandboxed iframe): follow the system.
    }
  }
  if (theme === "light" || theme === "dark") {
    root.setAttribute("data-theme", theme);
  }
})();
