// Idemlab exercises: progressive enhancement of the editor. Without this
// file an exercise is a form that posts to /exercises/{id}/check and gets a
// result page back. With it: Check posts to /api/v1/check and swaps the
// result in place (announced by its aria-live region), line numbers follow
// the text and mark the line of an error, Reset restores the starting
// handler, hints come one at a time, and passed exercises are remembered in
// this browser (localStorage "idemlab.exercises") and marked on the index.
(function () {
  "use strict";

  var KEY = "idemlab.exercises";

  function storageGet() {
    try {
      var list = JSON.parse(window.localStorage.getItem(KEY) || "[]");
      return Array.isArray(list) ? list.filter(function (s) { return typeof s === "string"; }) : [];
    } catch (e) {
      return [];
    }
  }

  function storageAdd(id) {
    var list = storageGet();
    if (list.indexOf(id) >= 0) {
      return;
    }
    list.push(id);
    try {
      window.localStorage.setItem(KEY, JSON.stringify(list));
    } catch (e) {
      /* blocked storage: the mark lasts for this page view */
    }
  }

  // ---------- Marks: the lesson's badge and the index ----------

  function renderMarks() {
    var passed = storageGet();
    document.querySelectorAll("[data-exercise]").forEach(function (section) {
      var badge = section.querySelector("[data-exercise-badge]");
      if (badge) {
        badge.hidden = passed.indexOf(section.getAttribute("data-exercise")) < 0;
      }
    });
    document.querySelectorAll("[data-exercise-ids]").forEach(function (mark) {
      var ids = (mark.getAttribute("data-exercise-ids") || "").split(" ").filter(Boolean);
      var done = ids.filter(function (id) { return passed.indexOf(id) >= 0; }).length;
      var all = ids.length > 0 && done === ids.length;
      mark.setAttribute("data-passed", all ? "true" : "false");
      // Every exercise of a lesson passed: the lesson counts as done.
      var item = all && mark.closest ? mark.closest("[data-lesson-slug]") : null;
      if (item && window.idemlab && window.idemlab.markDone) {
        window.idemlab.markDone(item.getAttribute("data-lesson-slug"));
      }
      var text = mark.querySelector("[data-exercise-mark-text]");
      if (text) {
        if (ids.length === 1) {
          text.textContent = all ? "Exercise passed" : "Exercise to do";
        } else {
          text.textContent = done + " of " + ids.length + " exercises passed";
        }
      }
    });
  }

  // ---------- Editor ----------

  function lineCount(text) {
    return text.split("\n").length;
  }

  function renderGutter(section) {
    var area = section.querySelector("textarea");
    var gutter = section.querySelector("[data-gutter]");
    if (!area || !gutter) {
      return;
    }
    var bad = parseInt(area.getAttribute("data-error-line") || "0", 10);
    var n = Math.max(lineCount(area.value), 1);
    if (gutter.childElementCount !== n || gutter.getAttribute("data-bad") !== String(bad)) {
      var frag = document.createDocumentFragment();
      for (var i = 1; i <= n; i++) {
        var span = document.createElement("span");
        span.textContent = String(i);
        if (i === bad) {
          span.className = "is-error";
          span.title = "The error is on this line";
        }
        frag.appendChild(span);
      }
      gutter.textContent = "";
      gutter.appendChild(frag);
      gutter.setAttribute("data-bad", String(bad));
    }
    gutter.scrollTop = area.scrollTop;
  }

  function setErrorLine(section, line) {
    var area = section.querySelector("textarea");
    if (line > 0) {
      area.setAttribute("data-error-line", String(line));
    } else {
      area.removeAttribute("data-error-line");
    }
    renderGutter(section);
  }

  function selectLine(area, line) {
    var lines = area.value.split("\n");
    var start = 0;
    for (var i = 0; i < line - 1 && i < lines.length; i++) {
      start += lines[i].length + 1;
    }
    var end = start + (lines[line - 1] || "").length;
    area.focus();
    area.setSelectionRange(start, end);
  }

  // replaceResult swaps the result's content and attributes but keeps the
  // element, so that its aria-live region announces the change.
  function replaceResult(section, html) {
    var result = section.querySelector("[data-result]");
    var tpl = document.createElement("template");
    tpl.innerHTML = html.trim();
    var next = tpl.content.firstElementChild;
    if (!result || !next) {
      return;
    }
    Array.prototype.slice.call(result.attributes).forEach(function (a) {
      if (!next.hasAttribute(a.name)) {
        result.removeAttribute(a.name);
      }
    });
    Array.prototype.slice.call(next.attributes).forEach(function (a) {
      result.setAttribute(a.name, a.value);
    });
    result.replaceChildren.apply(result, Array.prototype.slice.call(next.childNodes));
  }

  function showNotice(section, state, message) {
    var result = section.querySelector("[data-result]");
    var p = document.createElement("p");
    p.className = "exercise-notice";
    p.textContent = message;
    result.setAttribute("data-state", state);
    result.removeAttribute("data-passed");
    result.replaceChildren(p);
  }

  function check(section, form) {
    var area = section.querySelector("textarea");
    var button = section.querySelector("[data-check]");
    var status = section.querySelector("[data-status]");
    if (section.getAttribute("aria-busy") === "true") {
      return; // a double click: the first check is still running
    }
    section.setAttribute("aria-busy", "true");
    // aria-disabled, not disabled: a disabled button drops the focus to
    // <body> while the check runs.
    button.setAttribute("aria-disabled", "true");
    if (status) {
      status.textContent = "Checking every schedule…";
    }
    var body = new URLSearchParams();
    body.set("exercise", section.getAttribute("data-exercise"));
    body.set("handler", area.value);
    var ledger = form.querySelector("select[name=ledger]");
    if (ledger) {
      body.set("ledger", ledger.value); // PostgreSQL ledgers: the ledger the check runs on
    }
    var done = function () {
      section.removeAttribute("aria-busy");
      button.removeAttribute("aria-disabled");
      if (status) {
        status.textContent = "";
      }
    };
    return fetch(form.getAttribute("data-api"), {
      method: "POST",
      credentials: "same-origin",
      headers: { Accept: "application/json" },
      body: body,
    })
      .then(function (resp) {
        return resp.json().then(
          function (json) { return { status: resp.status, json: json }; },
          function () { return { status: resp.status, json: {} }; }
        );
      })
      .then(function (r) {
        done();
        if (r.status === 200 && typeof r.json.html === "string") {
          replaceResult(section, r.json.html);
          var err = r.json.error || (r.json.counterexample && r.json.counterexample.sql_error);
          setErrorLine(section, err && err.line ? err.line : 0);
          if (r.json.passed) {
            storageAdd(section.getAttribute("data-exercise"));
            renderMarks();
            lessonDone(section);
          }
          showResult(section);
          return;
        }
        var message = typeof r.json.error === "string" ? r.json.error : "the server answered " + r.status;
        if (r.status === 429 && typeof r.json.error === "string" && !/busy/.test(r.json.error)) {
          // Over this learner's own fair share, not a busy checker: say so.
          message = "Not checked yet: " + r.json.error + " Your handler is kept.";
        } else if (r.status === 429) {
          message = "The checker is busy with other learners. Your handler is kept: press Check again in a second.";
        } else {
          message = "Not checked: " + message + ".";
        }
        setErrorLine(section, 0);
        showNotice(section, "notice", message);
        showResult(section);
      })
      .catch(function () {
        done();
        showNotice(section, "notice", "Not checked: the server could not be reached. Your handler is kept; try again.");
        showResult(section);
      });
  }

  // showResult brings a check's answer where the eyes are: the result is
  // scrolled into view (unless it already is) and the focus moves to its
  // first line, its heading.
  function showResult(section) {
    var result = section.querySelector("[data-result]");
    if (!result) {
      return;
    }
    var heading =
      result.querySelector("[data-result-heading], h2, h3, h4, .exercise-verdict, .exercise-notice, .exercise-error > p, p") || result;
    if (!heading.hasAttribute("tabindex")) {
      heading.setAttribute("tabindex", "-1");
    }
    heading.setAttribute("data-focus-heading", "");
    var box = result.getBoundingClientRect();
    var header = document.querySelector(".site-header");
    var top = header ? Math.max(0, header.getBoundingClientRect().bottom) : 0;
    var bottom = window.innerHeight || document.documentElement.clientHeight;
    if (box.top < top || box.top > bottom - Math.min(box.height, bottom / 3)) {
      result.scrollIntoView({ block: "start" });
    }
    heading.focus({ preventScroll: true });
  }

  // lessonDone marks the exercise's lesson done (app.js keeps the marks):
  // on a lesson page once every exercise on it is passed, on an exercise's
  // own page when it is.
  function lessonDone(section) {
    var shared = window.idemlab;
    if (!shared || !shared.markDone) {
      return;
    }
    var box = document.querySelector("input[data-done-toggle][data-slug]");
    var slug = box ? box.getAttribute("data-slug") : "";
    if (!slug) {
      var back = document.querySelector("[data-testid='exercise-lesson'] a[href]");
      var m = back && new URL(back.href, window.location.href).pathname.match(/\/lessons\/([^/]+)$/);
      slug = m ? decodeURIComponent(m[1]) : "";
    }
    if (!slug) {
      return;
    }
    var passed = storageGet();
    var all = Array.prototype.every.call(document.querySelectorAll("[data-exercise]"), function (s) {
      return passed.indexOf(s.getAttribute("data-exercise")) >= 0;
    });
    if (all) {
      shared.markDone(slug);
    }
  }

  function initHints(section) {
    var button = section.querySelector("[data-next-hint]");
    var hints = Array.prototype.slice.call(section.querySelectorAll("details[data-hint]"));
    if (!button || hints.length === 0) {
      return;
    }
    // Hints the learner already opened stay; the rest wait for the button.
    var shown = 0;
    hints.forEach(function (d, i) {
      if (i === shown && d.open) {
        shown++;
      } else {
        d.hidden = true;
      }
    });
    function label() {
      if (shown >= hints.length) {
        button.hidden = true;
        return;
      }
      button.hidden = false;
      button.textContent = shown === 0 ? "Show a hint" : "Show another hint (" + (shown + 1) + " of " + hints.length + ")";
    }
    button.addEventListener("click", function () {
      var next = hints[shown];
      if (!next) {
        return;
      }
      next.hidden = false;
      next.open = true;
      shown++;
      label();
      var summary = next.querySelector("summary");
      if (summary) {
        summary.focus();
      }
    });
    label();
  }

  // An inverse exercise ("break it") answers in place: its form still
  // posts to /exercises/{id}/check, which answers with the result page;
  // the result area (and the editor, which "Show the shortest" fills) are
  // taken from it. Without JavaScript the page itself is the answer.
  function initInverse(section, area) {
    var form = area.form;
    if (!form || !window.fetch || !window.DOMParser || (form.getAttribute("method") || "").toLowerCase() !== "post" || form.target) {
      return;
    }
    var run = function (submitter) {
      if (section.getAttribute("aria-busy") === "true") {
        return;
      }
      var body = new URLSearchParams(new FormData(form));
      if (submitter && submitter.name) {
        body.set(submitter.name, submitter.value);
      }
      section.setAttribute("aria-busy", "true");
      if (submitter) {
        submitter.setAttribute("aria-disabled", "true");
      }
      var done = function () {
        section.removeAttribute("aria-busy");
        if (submitter) {
          submitter.removeAttribute("aria-disabled");
        }
      };
      fetch(form.action, { method: "POST", credentials: "same-origin", headers: { Accept: "text/html" }, body: body })
        .then(function (resp) {
          return resp.text();
        })
        .then(function (html) {
          done();
          var doc = new DOMParser().parseFromString(html, "text/html");
          var next = doc.getElementById(section.id);
          var result = next && next.querySelector("[data-result]");
          if (!result) {
            throw new Error("no result");
          }
          replaceResult(section, result.outerHTML);
          var nextArea = next.querySelector("textarea");
          if (nextArea && nextArea.value !== area.value) {
            area.value = nextArea.value;
          }
          var passed = section.querySelector("[data-result][data-passed]");
          if (passed) {
            storageAdd(passed.getAttribute("data-passed"));
            renderMarks();
            lessonDone(section);
          }
          showResult(section);
        })
        .catch(function () {
          done();
          showNotice(section, "notice", "Not checked: the server could not be reached. Your script is kept; try again.");
          showResult(section);
        });
    };
    form.addEventListener("submit", function (event) {
      event.preventDefault();
      run(event.submitter || form.querySelector("[type=submit]"));
    });
    area.addEventListener("keydown", function (event) {
      if (event.key === "Enter" && (event.ctrlKey || event.metaKey)) {
        event.preventDefault();
        run(form.querySelector("[data-testid='exercise-check']"));
      }
    });
  }

  // The learner's last handler, per exercise, kept in this browser so that
  // a reload (or coming back tomorrow) does not lose it.
  var DRAFT_PREFIX = "idemlab.handler.";

  function draft(id, value) {
    try {
      if (value === undefined) {
        return window.localStorage.getItem(DRAFT_PREFIX + id);
      }
      if (value === null) {
        window.localStorage.removeItem(DRAFT_PREFIX + id);
      } else {
        window.localStorage.setItem(DRAFT_PREFIX + id, value);
      }
    } catch (e) {
      /* blocked storage: the editor still works for this page view */
    }
    return null;
  }

  function initExercise(section) {
    // A result page from the form (or a passing check) records the pass;
    // an inverse exercise's plain form stops there.
    var result = section.querySelector("[data-result][data-passed]");
    if (result) {
      storageAdd(result.getAttribute("data-passed"));
      lessonDone(section);
    }
    var form = section.querySelector("form[data-exercise-form]");
    var area = section.querySelector("textarea");
    if (!form && area) {
      initInverse(section, area);
      return;
    }
    if (!form || !area) {
      return;
    }
    var id = section.getAttribute("data-exercise");
    var kept = draft(id);
    if (kept && area.value === (section.getAttribute("data-start") || "") && kept !== area.value) {
      area.value = kept;
      showNotice(section, "notice", "Your last handler for this exercise, kept in this browser, is back in the editor. Reset brings back the starting one.");
    } else if (area.value !== (section.getAttribute("data-start") || "")) {
      draft(id, area.value); // a result page: the handler just checked
    }
    renderGutter(section);
    area.addEventListener("input", function () {
      renderGutter(section);
      draft(id, area.value);
    });
    area.addEventListener("scroll", function () {
      renderGutter(section);
    });
    area.addEventListener("keydown", function (event) {
      if (event.key === "Enter" && (event.ctrlKey || event.metaKey)) {
        event.preventDefault();
        check(section, form);
      }
    });
    if (window.fetch && window.URLSearchParams) {
      form.addEventListener("submit", function (event) {
        event.preventDefault();
        check(section, form);
      });
    }
    var reset = section.querySelector("[data-reset]");
    if (reset) {
      reset.addEventListener("click", function (event) {
        if (event.button !== 0 || event.metaKey || event.ctrlKey || event.shiftKey || event.altKey) {
          return;
        }
        event.preventDefault();
        area.value = section.getAttribute("data-start") || "";
        draft(id, null);
        setErrorLine(section, 0);
        showNotice(section, "empty", "The editor holds the starting handler again.");
        area.focus();
      });
    }
    var use = section.querySelector("[data-use-solution]");
    if (use) {
      use.hidden = false;
      use.addEventListener("click", function () {
        area.value = use.getAttribute("data-solution") || "";
        draft(id, area.value);
        setErrorLine(section, 0);
        renderGutter(section);
        area.focus();
      });
    }
    section.addEventListener("click", function (event) {
      var link = event.target.closest ? event.target.closest("[data-goto-line]") : null;
      if (!link) {
        return;
      }
      event.preventDefault();
      selectLine(area, parseInt(link.getAttribute("data-goto-line"), 10) || 1);
    });
    initHints(section);
    // The handler reference starts closed on a narrow screen, where it
    // would stand between the editor and Check.
    var ref = section.querySelector("details.handler-ref-details");
    if (ref && window.matchMedia && window.matchMedia("(max-width: 47.99rem)").matches) {
      ref.open = false;
    }
  }

  document.querySelectorAll("[data-exercise]").forEach(initExercise);
  renderMarks();
  // A check's result page (the form's answer without JavaScript, or from an
  // embed, which opens it in a new tab): the answer, not the exercise's
  // top, is where the eyes go.
  // After the load, whose jump to the #fragment would undo it.
  if (/\/exercises\/[^/]+\/check$/.test(window.location.pathname)) {
    var atAnswer = function () {
      window.requestAnimationFrame(function () {
        document.querySelectorAll("[data-exercise]").forEach(function (section) {
          var result = section.querySelector("[data-result]");
          if (result && result.childElementCount > 0) {
            showResult(section);
          }
        });
      });
    };
    if (document.readyState === "complete") {
      atAnswer();
    } else {
      window.addEventListener("load", atAnswer);
    }
  }
  window.addEventListener("storage", function (event) {
    if (event.key === KEY) {
      renderMarks();
    }
  });
})();
