// Idemlab: loaded synchronously in <head> so the saved theme applies before
// the first paint (no flash of the wrong theme). Kept tiny on purpose.
// A ?theme=light|dark query (for iframes matching their host page) wins over
// the saved choice without replacing it.
//
// Before the first paint too: a browser in a workshop room (it joined one,
// localStorage "idemlab.workshop", or an embed carries the learner's token,
// ?ws=) loads workshop.js and its stylesheet, which the page names in
// <meta name="idemlab-workshop"> when workshop mode is on. Outside a room
// nothing of the workshop is fetched.
(function () {
  var root = document.documentElement;
  root.classList.add("js");
  var theme = null;
  var inRoom = false;
  var asked = /[?&]theme=(light|dark)(?:&|$)/.exec(window.location.search);
  try {
    theme = asked ? asked[1] : window.localStorage.getItem("idemlab.theme");
    inRoom = !!window.localStorage.getItem("idemlab.workshop");
  } catch (e) {
    // Storage may be blocked (private mode, sandboxed iframe): follow the system.
  }
  if (theme === "light" || theme === "dark") {
    root.setAttribute("data-theme", theme);
  }
  var workshop = document.querySelector('meta[name="idemlab-workshop"]');
  if (workshop && (inRoom || /[?&]ws=/.test(window.location.search))) {
    var css = document.createElement("link");
    css.rel = "stylesheet";
    css.href = workshop.getAttribute("data-css");
    document.head.appendChild(css);
    var js = document.createElement("script");
    js.src = workshop.getAttribute("content");
    document.head.appendChild(js);
  }
})();
