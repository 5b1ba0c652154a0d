// Idemlab: progressive enhancement. Every page works without this file; with
// it you get a theme toggle, ←/→ between lessons, copy buttons on code,
// done marks remembered in this browser, a table of contents that follows
// your reading, and, inside an iframe, the page telling its host its height.
//
// Loaded with `defer`, so the document is parsed when this runs. Functions
// that touch content take a root element so that fragments swapped in later
// (the live playground) can be enhanced the same way.
(function () {
  "use strict";

  var root = document.documentElement;
  var THEME_KEY = "idemlab.theme";
  var DONE_KEY = "idemlab.done";

  // localStorage can throw (blocked storage, sandboxed iframes): never let
  // that break the page.
  var storage = {
    get: function (key) {
      try {
        return window.localStorage.getItem(key);
      } catch (e) {
        return null;
      }
    },
    set: function (key, value) {
      try {
        window.localStorage.setItem(key, value);
      } catch (e) {
        /* keep working for this page view */
      }
    },
  };

  // One polite live region for short confirmations ("Copied", "Marked done").
  var announcer;
  function announce(message) {
    if (!announcer) {
      announcer = document.createElement("div");
      announcer.className = "visually-hidden";
      announcer.setAttribute("aria-live", "polite");
      announcer.setAttribute("data-testid", "announcer");
      document.body.appendChild(announcer);
    }
    announcer.textContent = "";
    // A fresh text node after a tick makes screen readers repeat equal messages.
    window.setTimeout(function () {
      announcer.textContent = message;
    }, 30);
  }

  // ---------- Theme ----------

  var darkQuery = window.matchMedia ? window.matchMedia("(prefers-color-scheme: dark)") : null;

  function currentTheme() {
    var forced = root.getAttribute("data-theme");
    if (forced === "light" || forced === "dark") {
      return forced;
    }
    return darkQuery && darkQuery.matches ? "dark" : "light";
  }

  function initThemeToggle() {
    var buttons = document.querySelectorAll("[data-theme-toggle]");
    function label() {
      var next = currentTheme() === "dark" ? "light" : "dark";
      buttons.forEach(function (button) {
        button.setAttribute("aria-label", "Switch to " + next + " theme");
        button.title = "Switch to " + next + " theme";
      });
    }
    buttons.forEach(function (button) {
      button.addEventListener("click", function () {
        var next = currentTheme() === "dark" ? "light" : "dark";
        root.setAttribute("data-theme", next);
        storage.set(THEME_KEY, next);
        label();
      });
    });
    if (darkQuery && darkQuery.addEventListener) {
      darkQuery.addEventListener("change", label);
    }
    // Another tab changed the theme.
    window.addEventListener("storage", function (event) {
      if (event.key === THEME_KEY && (event.newValue === "light" || event.newValue === "dark")) {
        root.setAttribute("data-theme", event.newValue);
        label();
      }
    });
    label();
  }

  // ---------- ←/→ between lessons ----------

  function initLessonKeys() {
    // Where the learner last was: a click on a playground's text leaves the
    // focus on <body>, and arrows there must not leave the lesson either.
    var lastInPlayground = false;
    function remember(event) {
      lastInPlayground = !!(event.target && event.target.closest && event.target.closest("[data-pg]"));
    }
    document.addEventListener("pointerdown", remember, true);
    document.addEventListener("focusin", remember, true);
    document.addEventListener("keydown", function (event) {
      if (event.defaultPrevented || event.altKey || event.ctrlKey || event.metaKey || event.shiftKey) {
        return;
      }
      if (event.key !== "ArrowLeft" && event.key !== "ArrowRight") {
        return;
      }
      // Arrows keep their meaning in fields, scrollable code and the playground.
      var target = event.target;
      if (
        target &&
        target.closest &&
        target.closest("input, textarea, select, [contenteditable], pre, [role='slider'], [role='tablist'], .playground, [data-keys='off']")
      ) {
        return;
      }
      if (lastInPlayground && (!target || target === document.body || target === root)) {
        return;
      }
      var rel = event.key === "ArrowLeft" ? "prev" : "next";
      var link = document.querySelector("a[rel~='" + rel + "'][href]");
      if (!link) {
        return;
      }
      event.preventDefault();
      window.location.assign(link.href);
    });
  }

  // ---------- Copy buttons on code blocks ----------

  function copyText(text) {
    if (navigator.clipboard && window.isSecureContext) {
      return navigator.clipboard.writeText(text);
    }
    return new Promise(function (resolve, reject) {
      var area = document.createElement("textarea");
      area.value = text;
      area.setAttribute("readonly", "");
      area.className = "visually-hidden";
      document.body.appendChild(area);
      area.select();
      var ok = false;
      try {
        ok = document.execCommand("copy");
      } catch (e) {
        ok = false;
      }
      document.body.removeChild(area);
      if (ok) {
        resolve();
      } else {
        reject(new Error("copy refused"));
      }
    });
  }

  function enhanceCodeBlocks(scope) {
    scope.querySelectorAll(".prose pre, pre[data-copy]").forEach(function (pre) {
      var parent = pre.parentNode;
      if (!parent || (parent.classList && parent.classList.contains("code-block"))) {
        return;
      }
      var wrapper = document.createElement("div");
      wrapper.className = "code-block";
      parent.insertBefore(wrapper, pre);
      wrapper.appendChild(pre);

      var button = document.createElement("button");
      button.type = "button";
      button.className = "copy-button";
      button.textContent = "Copy";
      button.setAttribute("aria-label", "Copy code to clipboard");
      button.setAttribute("data-testid", "copy-button");
      var timer;
      button.addEventListener("click", function () {
        var code = pre.querySelector("code") || pre;
        copyText(code.innerText.replace(/\n$/, "")).then(
          function () {
            button.textContent = "Copied";
            button.setAttribute("data-copied", "true");
            announce("Code copied to clipboard");
          },
          function () {
            button.textContent = "Select and copy";
            var range = document.createRange();
            range.selectNodeContents(code);
            var selection = window.getSelection();
            selection.removeAllRanges();
            selection.addRange(range);
          }
        );
        window.clearTimeout(timer);
        timer = window.setTimeout(function () {
          button.textContent = "Copy";
          button.removeAttribute("data-copied");
        }, 2000);
      });
      wrapper.appendChild(button);
    });
  }

  // ---------- Done marks ----------

  function readDone() {
    try {
      var list = JSON.parse(storage.get(DONE_KEY) || "[]");
      return Array.isArray(list) ? list.filter(function (s) { return typeof s === "string"; }) : [];
    } catch (e) {
      return [];
    }
  }

  function initDoneMarks() {
    var done = new Set(readDone());

    function render() {
      document.querySelectorAll("input[data-done-toggle]").forEach(function (box) {
        box.checked = done.has(box.getAttribute("data-slug"));
      });
      document.querySelectorAll("[data-lesson-slug]").forEach(function (el) {
        el.setAttribute("data-done", done.has(el.getAttribute("data-lesson-slug")) ? "true" : "false");
      });
      document.querySelectorAll("[data-progress]").forEach(function (progress) {
        var slugs = (progress.getAttribute("data-slugs") || "").split(" ").filter(Boolean);
        var count = slugs.filter(function (slug) { return done.has(slug); }).length;
        var bar = progress.querySelector("progress");
        if (bar) {
          bar.max = slugs.length || 1;
          bar.value = count;
        }
        var text = progress.querySelector("[data-progress-text]");
        if (text) {
          text.textContent = count + " of " + slugs.length + " lessons done";
        }
      });

      // The start button points at the first lesson not done yet.
      var start = document.querySelector("[data-testid='start']");
      var startLabel = start && start.querySelector("[data-start-label]");
      var items = Array.from(document.querySelectorAll("[data-testid='lesson-item']"));
      if (startLabel && items.length > 0) {
        var nextIndex = items.findIndex(function (item) { return !done.has(item.getAttribute("data-lesson-slug")); });
        var target = items[nextIndex < 0 ? 0 : nextIndex].querySelector("a[href]");
        if (target) {
          start.href = target.href;
        }
        if (nextIndex < 0) {
          startLabel.textContent = "Read again from lesson 1";
        } else if (nextIndex > 0 || items.some(function (item) { return done.has(item.getAttribute("data-lesson-slug")); })) {
          startLabel.textContent = "Continue with lesson " + (nextIndex + 1);
        } else {
          startLabel.textContent = "Start with lesson 1";
        }
      }
    }

    document.addEventListener("change", function (event) {
      var box = event.target;
      if (!box.matches || !box.matches("input[data-done-toggle]")) {
        return;
      }
      var slug = box.getAttribute("data-slug");
      if (box.checked) {
        done.add(slug);
      } else {
        done.delete(slug);
      }
      storage.set(DONE_KEY, JSON.stringify(Array.from(done)));
      render();
      announce(box.checked ? "Marked as done" : "Marked as not done");
    });

    window.addEventListener("storage", function (event) {
      if (event.key === DONE_KEY) {
        done = new Set(readDone());
        render();
      }
    });
    render();
  }

  // ---------- Table of contents follows the reading position ----------

  function initTocSpy() {
    var toc = document.querySelector("[data-testid='toc']");
    if (!toc || !window.IntersectionObserver) {
      return;
    }
    var links = new Map();
    toc.querySelectorAll("a[href^='#']").forEach(function (a) {
      var id = decodeURIComponent(a.getAttribute("href").slice(1));
      var heading = document.getElementById(id);
      if (heading) {
        links.set(heading, a);
      }
    });
    if (links.size === 0) {
      return;
    }
    var visible = new Set();
    var headings = Array.from(links.keys());
    var observer = new IntersectionObserver(
      function (entries) {
        entries.forEach(function (entry) {
          if (entry.isIntersecting) {
            visible.add(entry.target);
          } else {
            visible.delete(entry.target);
          }
        });
        var active = headings.find(function (h) { return visible.has(h); });
        if (!active) {
          return;
        }
        links.forEach(function (a, heading) {
          if (heading === active) {
            a.setAttribute("aria-current", "true");
          } else {
            a.removeAttribute("aria-current");
          }
        });
      },
      { rootMargin: "-56px 0px -60% 0px" }
    );
    headings.forEach(function (h) { observer.observe(h); });
  }

  // ---------- Embed view: tell the host page our height ----------

  // Host pages listen for {type: "idemlab:resize", height} and size the iframe.
  function initEmbed() {
    if (!document.body.classList.contains("embed-body")) {
      return;
    }
    // Links leave the iframe instead of loading the full site inside it.
    document.querySelectorAll("a[href]").forEach(function (a) {
      if (a.closest("[data-pg]") && !a.hasAttribute("data-no-swap")) {
        return; // playground controls change the playground inside the frame
      }
      if (a.getAttribute("href").charAt(0) !== "#") {
        a.target = "_blank";
        a.rel = "noopener";
      }
    });
    if (window.parent === window) {
      return;
    }
    var last = -1;
    function send() {
      var height = Math.ceil(document.body.getBoundingClientRect().height);
      if (height === last) {
        return;
      }
      last = height;
      window.parent.postMessage({ type: "idemlab:resize", height: height, path: window.location.pathname }, "*");
    }
    if (window.ResizeObserver) {
      new ResizeObserver(send).observe(document.body);
    }
    window.addEventListener("load", send);
    send();
  }

  // ---------- Live playground ----------

  // Every playground control is a link or a GET form to the next state, so
  // the page works without this. With it, a click fetches only the
  // playground (?fragment=1), swaps it in place, pushes the URL (Back is
  // undo), and keeps the scroll position, the focus and open panels.
  function pgFocusKey(el) {
    if (!el || !el.closest) {
      return "";
    }
    var owner = el.closest("[data-message], [data-worker], [data-event]");
    var where = owner ? owner.getAttribute("data-message") || owner.getAttribute("data-worker") || owner.getAttribute("data-event") : "";
    // The title, not the text: a shortcut hint (<kbd>) moves between controls.
    return where + "|" + (el.getAttribute("data-testid") || "") + "|" + (el.getAttribute("title") || (el.textContent || "").trim());
  }

  function pgRefocus(fig, key, testid) {
    var candidates = fig.querySelectorAll("a[href], button, summary");
    for (var i = 0; i < candidates.length; i++) {
      if (pgFocusKey(candidates[i]) === key) {
        candidates[i].focus({ preventScroll: true });
        return;
      }
    }
    var same = testid && fig.querySelector("a[data-testid='" + testid + "']");
    if (same) {
      same.focus({ preventScroll: true });
      return;
    }
    fig.setAttribute("tabindex", "-1");
    fig.focus({ preventScroll: true });
  }

  // A rejected script puts the caret on the line the error names; any
  // other rejected input focuses the message.
  function pgFocusProblem(fig, problem) {
    var area = fig.querySelector("textarea[aria-invalid='true']");
    if (!area) {
      problem.focus({ preventScroll: true });
      return;
    }
    var line = parseInt(area.getAttribute("data-error-line"), 10) || 0;
    var start = 0;
    var lines = area.value.split("\n");
    for (var i = 0; i < line - 1 && i < lines.length; i++) {
      start += lines[i].length + 1;
    }
    area.focus({ preventScroll: true });
    if (line > 0 && line <= lines.length) {
      area.setSelectionRange(start, start + lines[line - 1].length);
    }
  }

  function pgScrollToCursor(fig) {
    var scroller = fig.querySelector(".pg-scroll");
    var band = scroller && scroller.querySelector(".dg-band.is-current rect");
    if (!band || scroller.scrollHeight <= scroller.clientHeight) {
      return;
    }
    var y = parseFloat(band.getAttribute("y")) || 0;
    var h = parseFloat(band.getAttribute("height")) || 0;
    if (y < scroller.scrollTop || y + h > scroller.scrollTop + scroller.clientHeight) {
      scroller.scrollTop = Math.max(0, y + h - scroller.clientHeight + 12);
    }
  }

  function pgSwap(fig, url, push, focus) {
    var fetchURL = new URL(url.href);
    if (fig.id !== "playground" && !fetchURL.searchParams.has("pg")) {
      // A lesson URL without ?pg= shows every block at its start.
      fetchURL = new URL(fig.getAttribute("data-home"), window.location.href);
    }
    fetchURL.searchParams.set("fragment", "1");
    fetchURL.hash = "";
    fig.setAttribute("aria-busy", "true");
    var top = fig.getBoundingClientRect().top;
    var events = fig.querySelector(".pg-events");
    var eventsLeft = events ? events.scrollLeft : 0;
    var panels = Array.prototype.map.call(fig.querySelectorAll("details.pg-panel, details.pg-steps, details.pg-disclosure"), function (d) {
      return d.open;
    });
    var before = fig.querySelector("[data-announce]");
    var beforeText = before ? before.textContent : "";
    // Focus inside the old figure is lost when it is replaced: keep it in
    // the playground (the same control, else the figure itself).
    var hadFocus = fig.contains(document.activeElement);
    return fetch(fetchURL.href, { credentials: "same-origin", headers: { Accept: "text/html" } })
      .then(function (resp) {
        // 400 is the playground with the learner's mistake shown in place;
        // 422, the run stopped at its budget, the playground saying so:
        // both are swapped in like any state.
        var rejected = resp.status === 400;
        if (!resp.ok && !rejected && resp.status !== 422) {
          throw new Error("status " + resp.status);
        }
        var finalURL = new URL(resp.url || fetchURL.href);
        finalURL.searchParams.delete("fragment");
        if (!url.searchParams.has("pg") && fig.id !== "playground") {
          finalURL = url; // the lesson itself: every block at its start
        }
        return resp.text().then(function (html) {
          return { html: html, url: finalURL, rejected: rejected };
        });
      })
      .then(function (r) {
        var tpl = document.createElement("template");
        tpl.innerHTML = r.html.trim();
        var next = tpl.content.firstElementChild;
        if (!next || !next.hasAttribute("data-pg")) {
          throw new Error("not a playground");
        }
        next.querySelectorAll("details.pg-panel, details.pg-steps, details.pg-disclosure").forEach(function (d, i) {
          if (i < panels.length) {
            d.open = panels[i];
          }
        });
        var wasSwapped = fig.hasAttribute("data-swapped");
        fig.replaceWith(next);
        var nextEvents = next.querySelector(".pg-events");
        if (nextEvents) {
          nextEvents.scrollLeft = eventsLeft;
        }
        window.scrollBy({ top: next.getBoundingClientRect().top - top, behavior: "instant" });
        var target = r.url.pathname + r.url.search + (next.id !== "playground" ? "#" + next.id : "");
        var atHome = next.id !== "playground" && !r.url.searchParams.has("pg");
        if (r.rejected) {
          // The URL stays the last good state's: nothing to push.
          atHome = !wasSwapped;
        } else if (push) {
          window.history.pushState({ pg: next.id }, "", target);
        }
        if (!atHome) {
          next.setAttribute("data-swapped", "true");
        }
        enhancePlayground(next, true);
        var problem = next.querySelector("[data-testid='pg-problem']");
        if (r.rejected && problem) {
          pgFocusProblem(next, problem);
        } else if (focus) {
          pgRefocus(next, focus.key, focus.testid);
        } else if (hadFocus) {
          pgRefocus(next, "", "");
        }
        var after = next.querySelector("[data-announce]");
        if (after && after.textContent !== beforeText) {
          announce(after.textContent);
        }
        return next;
      })
      .catch(function () {
        // The server explains what went wrong (a 400 page) on a full load.
        window.location.assign(url.href);
      });
  }

  // The Embed button links to the oEmbed answer for this state; with
  // JavaScript it copies that answer's snippet (iframe and resize script).
  function pgCopyEmbed(el) {
    fetch(el.href, { credentials: "same-origin", headers: { Accept: "application/json" } })
      .then(function (resp) {
        if (!resp.ok) {
          throw new Error("status " + resp.status);
        }
        return resp.json();
      })
      .then(function (answer) {
        return copyText(answer.html).then(
          function () {
            el.setAttribute("data-copied", "true");
            announce("Embed code copied");
            window.setTimeout(function () {
              el.removeAttribute("data-copied");
            }, 2000);
          },
          function () {
            window.prompt("Copy this embed code:", answer.html);
          }
        );
      })
      .catch(function () {
        window.location.assign(el.href);
      });
  }

  // Undo is the browser's Back, but only back to a state this page pushed:
  // on the state a visitor arrived at, Back would leave the playground.
  function pgCanUndo() {
    return !!(window.history.state && window.history.state.pg);
  }

  function pgUndo() {
    if (pgCanUndo()) {
      window.history.back();
    } else {
      announce("Nothing to undo: this is the state you opened.");
    }
  }

  function enhancePlayground(fig, swapped) {
    fig.querySelectorAll("[data-undo]").forEach(function (b) {
      b.setAttribute("aria-disabled", pgCanUndo() ? "false" : "true");
    });
    if (swapped) {
      pgScrollToCursor(fig); // never on arrival: the diagram starts at its top
    }
    var events = fig.querySelector(".pg-events");
    var current = events && events.querySelector(".is-current");
    if (current && events.scrollWidth > events.clientWidth) {
      var left = current.offsetLeft - events.offsetLeft;
      if (left < events.scrollLeft || left + current.offsetWidth > events.scrollLeft + events.clientWidth) {
        events.scrollLeft = Math.max(0, left - events.clientWidth / 2);
      }
    }
    // Inside an iframe, controls stay in the frame; other links leave it.
    fig.querySelectorAll("a[href]").forEach(function (a) {
      if (!a.hasAttribute("data-no-swap")) {
        a.removeAttribute("target");
      }
    });
  }

  function currentPlayground(target) {
    var fig = target && target.closest ? target.closest("[data-pg]") : null;
    if (fig) {
      return fig;
    }
    // On the full-size and embedded playground pages, keys need no focus.
    var all = document.querySelectorAll("[data-pg]");
    if (all.length === 1 && all[0].id === "playground") {
      return all[0];
    }
    return null;
  }

  function initPlaygrounds() {
    var figures = document.querySelectorAll("[data-pg]");
    if (figures.length === 0 || !window.fetch || !window.history.pushState || !window.URL) {
      return;
    }
    figures.forEach(function (fig) {
      enhancePlayground(fig, false);
    });

    document.addEventListener("click", function (event) {
      if (event.defaultPrevented || event.button !== 0 || event.metaKey || event.ctrlKey || event.shiftKey || event.altKey) {
        return;
      }
      var el = event.target.closest ? event.target.closest("a[href], button[data-undo]") : null;
      var fig = el && el.closest("[data-pg]");
      if (!fig) {
        return;
      }
      if (el.hasAttribute("data-undo")) {
        pgUndo();
        return;
      }
      if (el.hasAttribute("data-embed")) {
        event.preventDefault();
        pgCopyEmbed(el);
        return;
      }
      if (el.hasAttribute("data-no-swap")) {
        return;
      }
      if (el.hasAttribute("data-permalink")) {
        event.preventDefault();
        copyText(el.href).then(
          function () {
            el.setAttribute("data-copied", "true");
            announce("Link to this state copied");
            window.setTimeout(function () {
              el.removeAttribute("data-copied");
            }, 2000);
          },
          function () {
            window.prompt("Copy this link:", el.href);
          }
        );
        return;
      }
      var url = new URL(el.href, window.location.href);
      if (url.origin !== window.location.origin || url.pathname !== window.location.pathname) {
        return;
      }
      event.preventDefault();
      pgSwap(fig, url, true, { key: pgFocusKey(el), testid: el.getAttribute("data-testid") });
    });

    document.addEventListener("submit", function (event) {
      var form = event.target;
      var fig = form.closest ? form.closest("[data-pg]") : null;
      if (!fig || (form.getAttribute("method") || "get").toLowerCase() !== "get" || event.defaultPrevented) {
        return;
      }
      event.preventDefault();
      var url = new URL(form.getAttribute("action") || window.location.pathname, window.location.href);
      url.search = new URLSearchParams(new FormData(form)).toString();
      var submit = form.querySelector("[type=submit]");
      pgSwap(fig, url, true, submit ? { key: pgFocusKey(submit) } : null);
    });

    window.addEventListener("popstate", function () {
      var params = new URLSearchParams(window.location.search);
      var active = document.activeElement;
      document.querySelectorAll("[data-pg]").forEach(function (fig) {
        // Undo and Back keep the focus on the same control.
        var focus = fig.contains(active) ? { key: pgFocusKey(active), testid: active.getAttribute("data-testid") } : null;
        if (fig.id === "playground" || params.get("pg") === fig.id) {
          pgSwap(fig, new URL(window.location.href), false, focus);
        } else if (fig.hasAttribute("data-swapped")) {
          // Back past this block's first change: its initial state.
          pgSwap(fig, new URL(fig.getAttribute("data-home"), window.location.href), false, focus).then(function (next) {
            if (next) {
              next.removeAttribute("data-swapped");
            }
          });
        }
      });
    });

    document.addEventListener("keydown", function (event) {
      if (event.defaultPrevented || event.ctrlKey || event.metaKey || event.altKey) {
        return;
      }
      var target = event.target;
      if (target && target.closest && target.closest("input, textarea, select, [contenteditable], .pg-scroll, [popover]")) {
        if (!(event.key === "Escape" || (event.key === "?" && target.closest("[popover]")))) {
          return;
        }
      }
      var fig = currentPlayground(target);
      if (!fig) {
        return;
      }
      var key = event.key;
      if (key === "?") {
        var help = fig.querySelector("[popover]");
        if (help && help.togglePopover) {
          event.preventDefault();
          help.togglePopover();
        }
        return;
      }
      if (key === "u") {
        event.preventDefault();
        pgUndo();
        return;
      }
      if (event.shiftKey && key.length > 1) {
        return;
      }
      var control = fig.querySelector("a[data-key='" + (window.CSS && CSS.escape ? CSS.escape(key) : key) + "']");
      if (control) {
        event.preventDefault();
        control.click();
      }
    });
  }

  initThemeToggle();
  initLessonKeys();
  enhanceCodeBlocks(document);
  initDoneMarks();
  initTocSpy();
  initEmbed();
  initPlaygrounds();
})();
