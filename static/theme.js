// Idemlab: loaded synchronously in <head> so the saved theme applies before
// the first paint (no flash of the wrong theme). Kept tiny on purpose.
(function () {
  var root = document.documentElement;
  root.classList.add("js");
  try {
    var theme = localStorage.getItem("idemlab.theme");
    if (theme === "light" || theme === "dark") {
      root.setAttribute("data-theme", theme);
    }
  } catch (e) {
    // Storage may be blocked (private mode, sandboxed iframe): follow the system.
  }
})();
