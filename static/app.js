// Idemlab: progressive enhancement. Every page works without this file; with
// it you get a theme toggle, ←/→ between lessons, copy buttons on code,
// done marks remembered in this browser, a table of contents that follows
// your reading, and, inside an iframe, the page telling its host its height.
// The live playground is playground.js.
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

  // ---------- Scrollable regions take the focus ----------

  // A region that scrolls and holds nothing focusable gets tabindex=0, so
  // that a keyboard can scroll it (axe: scrollable-region-focusable). Run
  // again after a swap (playground.js) and when the width changes.
  var SCROLLERS = "pre, .prose table, .pg-table-wrap, .pg-scroll, .exercise-source, .toc details, .handler-ref-details";

  function focusableScrollers(scope) {
    (scope || document).querySelectorAll(SCROLLERS).forEach(function (el) {
      var scrolls = el.scrollWidth > el.clientWidth + 1 || el.scrollHeight > el.clientHeight + 1;
      if (el.getAttribute("data-scroll-focus") === "added" && !scrolls) {
        el.removeAttribute("tabindex");
        el.removeAttribute("data-scroll-focus");
        return;
      }
      if (!scrolls || el.hasAttribute("tabindex") || el.querySelector("a[href], button, input, select, textarea, summary, [tabindex]")) {
        return;
      }
      el.setAttribute("tabindex", "0");
      el.setAttribute("data-scroll-focus", "added");
    });
  }

  function initScrollers() {
    focusableScrollers(document);
    var timer;
    window.addEventListener("resize", function () {
      window.clearTimeout(timer);
      timer = window.setTimeout(function () {
        focusableScrollers(document);
      }, 150);
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

  var markDone = function () {};

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

    // A passed exercise marks its lesson done (exercise.js).
    markDone = function (slug) {
      if (!slug || done.has(slug)) {
        return;
      }
      done.add(slug);
      storage.set(DONE_KEY, JSON.stringify(Array.from(done)));
      render();
    };

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
    // The frame is as tall as its page, so it never scrolls: an in-page
    // link (a table of contents, "Skip past this playground") moves the
    // focus to its target and asks the host to scroll there. The resize
    // message carries the target's offset from the frame's top (scrollTo);
    // the frame also scrolls it into view itself, which Chromium passes on
    // to the host page.
    document.addEventListener("click", function (event) {
      if (event.defaultPrevented || event.button !== 0 || event.metaKey || event.ctrlKey || event.shiftKey || event.altKey) {
        return;
      }
      var a = event.target.closest ? event.target.closest("a[href^='#']") : null;
      var id = a && decodeURIComponent(a.getAttribute("href").slice(1));
      var target = id && document.getElementById(id);
      if (!target) {
        return;
      }
      event.preventDefault();
      if (!target.matches("a[href], button, input, select, textarea, summary, [tabindex]")) {
        target.setAttribute("tabindex", "-1");
      }
      target.focus({ preventScroll: true });
      var top = Math.max(0, Math.round(target.getBoundingClientRect().top + window.scrollY));
      window.parent.postMessage(
        { type: "idemlab:resize", height: Math.ceil(document.body.getBoundingClientRect().height), path: window.location.pathname, scrollTo: top },
        "*"
      );
      target.scrollIntoView({ block: "start", behavior: "instant" });
    });
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

  // The playground module (playground.js, loaded after this file) shares
  // these rather than keeping copies.
  window.idemlab = {
    announce: announce,
    copyText: copyText,
    focusableScrollers: focusableScrollers,
    markDone: function (slug) {
      markDone(slug);
    },
  };

  initThemeToggle();
  initLessonKeys();
  enhanceCodeBlocks(document);
  initDoneMarks();
  initScrollers();
  initTocSpy();
  initEmbed();
})();
