// Idemlab: the live playground. Every playground control is a link or a
// GET form to the next state, so the playground works without this file;
// with it, a click swaps the playground in place (see pgSwap).
//
// Loaded with `defer` after app.js, whose announce and copyText it uses
// (window.idemlab).
//
// Kept in the browser: goals met (localStorage "idemlab.goals"), answered
// or skipped predictions ("idemlab.predictions"), and for this tab every
// lesson block's last state (sessionStorage "idemlab.pg.states").
(function () {
  "use strict";

  var shared = window.idemlab;
  if (!shared) {
    return;
  }
  var announce = shared.announce;
  var copyText = shared.copyText;

  // Every playground control is a link or a GET form to the next state, so
  // the page works without this. With it, a click fetches only the
  // playground (?fragment=1), swaps it in place, pushes the URL (Back is
  // undo), and keeps the scroll position, the focus and open panels.
  // The parts of a playground a control belongs to: after a swap, a
  // control that is gone leaves the focus in the same part.
  var PG_REGIONS =
    "[data-testid='pg-timeline'], [data-more], [data-testid='pg-controls'], [data-testid='pg-views'], [data-testid='pg-goals'], [data-testid='pg-predict'], [data-testid='pg-ledgers']";

  function pgRegionOf(el) {
    var region = el.closest(PG_REGIONS);
    if (!region) {
      return "";
    }
    return region.hasAttribute("data-more") ? "more:" + region.getAttribute("data-more") : region.getAttribute("data-testid");
  }

  function pgFindRegion(fig, name) {
    if (!name) {
      return null;
    }
    if (name.indexOf("more:") === 0) {
      return fig.querySelector("[data-more='" + cssEscape(name.slice(5)) + "']");
    }
    return fig.querySelector("[data-testid='" + cssEscape(name) + "']");
  }

  function cssEscape(s) {
    return window.CSS && CSS.escape ? CSS.escape(s) : String(s).replace(/['\\]/g, "\\$&");
  }

  // A control's identity across swaps: its part of the playground, the
  // message, worker or event it acts on, its test id and its title.
  function pgFocusKey(el) {
    if (!el || !el.closest) {
      return "";
    }
    var owner = el.closest("[data-message], [data-worker], [data-event]");
    var where = owner ? owner.getAttribute("data-message") || owner.getAttribute("data-worker") || owner.getAttribute("data-event") : "";
    // The title, not the text: a shortcut hint (<kbd>) moves between controls.
    return pgRegionOf(el) + "|" + where + "|" + (el.getAttribute("data-testid") || "") + "|" + (el.getAttribute("title") || (el.textContent || "").trim());
  }

  function pgFocusOn(el) {
    if (!el.matches("a[href], button, summary, input, select, textarea") && !el.hasAttribute("tabindex")) {
      el.setAttribute("tabindex", "-1"); // a control greyed in this state keeps the focus
    }
    el.focus({ preventScroll: true });
  }

  // pgRefocus puts the focus back on the control the learner used, found
  // in the new figure by its key; when that control is gone, on the same
  // control greyed (it says why not now), the same control of another
  // message, the current event of the timeline, or the first control of
  // the same part; the figure itself only when nothing is left.
  function pgRefocus(fig, key, testid) {
    var parts = (key || "").split("|");
    var region = parts[0] || "";
    var where = parts[1] || "";
    var id = parts[2] || testid || "";
    var candidates = fig.querySelectorAll("a[href], button, summary");
    for (var i = 0; i < candidates.length; i++) {
      if (key && pgFocusKey(candidates[i]) === key) {
        pgFocusOn(candidates[i]);
        return;
      }
    }
    if (id) {
      var same = fig.querySelectorAll("[data-testid='" + cssEscape(id) + "']");
      for (var j = 0; j < same.length; j++) {
        var k = pgFocusKey(same[j]).split("|");
        if (k[0] === region && k[1] === where && !same[j].matches("[aria-hidden='true'] *")) {
          pgFocusOn(same[j]);
          return;
        }
      }
    }
    var part = pgFindRegion(fig, region);
    if (part && region === "pg-timeline") {
      var current = part.querySelector("[data-current] .pg-event-link");
      if (current) {
        pgFocusOn(current);
        return;
      }
    }
    var other = id && fig.querySelector("a[data-testid='" + cssEscape(id) + "']");
    if (other) {
      pgFocusOn(other);
      return;
    }
    var first = part && part.querySelector("a[href], button:not([disabled]), summary, input:not([type=hidden]), textarea, select");
    if (first) {
      pgFocusOn(first);
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
    var band = scroller && scroller.querySelector(".dg-band[data-current] rect");
    if (!band || scroller.scrollHeight <= scroller.clientHeight) {
      return;
    }
    var y = parseFloat(band.getAttribute("y")) || 0;
    var h = parseFloat(band.getAttribute("height")) || 0;
    if (y < scroller.scrollTop || y + h > scroller.scrollTop + scroller.clientHeight) {
      scroller.scrollTop = Math.max(0, y + h - scroller.clientHeight + 12);
    }
  }

  // pgFragmentURL is the address of a state's fragment (the link's state,
  // with fragment=1: the playground alone).
  function pgFragmentURL(fig, url) {
    var fetchURL = new URL(url.href);
    if (fig.id !== "playground" && !fetchURL.searchParams.has("pg")) {
      // A lesson URL without ?pg= shows every block at its start.
      fetchURL = new URL(fig.getAttribute("data-home"), window.location.href);
    }
    fetchURL.searchParams.set("fragment", "1");
    fetchURL.hash = "";
    return fetchURL;
  }

  // One frame per click: the fragment is asked for at pointerdown, a press
  // (tens of milliseconds) before the click, and the click takes that
  // answer. A press that never becomes a click costs one run, which the
  // server's run cache answers again for free.
  var pgEarly = null; // {href, at, answer}

  function pgPrefetch(fig, url) {
    var href = pgFragmentURL(fig, url).href;
    pgEarly = { href: href, at: Date.now(), answer: fetch(href, { credentials: "same-origin", headers: { Accept: "text/html" } }) };
    pgEarly.answer.catch(function () {}); // the click asks again
  }

  function pgFetch(href) {
    var early = pgEarly;
    pgEarly = null;
    if (early && early.href === href && Date.now() - early.at < 5000) {
      return early.answer.catch(function () {
        return fetch(href, { credentials: "same-origin", headers: { Accept: "text/html" } });
      });
    }
    return fetch(href, { credentials: "same-origin", headers: { Accept: "text/html" } });
  }

  function pgSwap(fig, url, push, focus) {
    var fetchURL = pgFragmentURL(fig, url);
    // The control panels (details[data-more]) are part of the state: every
    // link carries them (playurl), and a toggle swaps the state in.
    fig.setAttribute("aria-busy", "true");
    var top = fig.getBoundingClientRect().top;
    var events = fig.querySelector(".pg-events");
    var eventsLeft = events ? events.scrollLeft : 0;
    var panels = Array.prototype.map.call(fig.querySelectorAll("details.pg-panel:not([data-more])"), function (d) {
      return d.open;
    });
    var before = fig.querySelector("[data-announce]");
    var beforeText = before ? before.textContent : "";
    // Focus inside the old figure is lost when it is replaced: keep it in
    // the playground (the same control, else the figure itself).
    var hadFocus = fig.contains(document.activeElement);
    return pgFetch(fetchURL.href)
      .then(function (resp) {
        // 400 is the playground with the learner's mistake shown in place;
        // 422, the run stopped at its budget, the playground saying so:
        // both are swapped in like any state.
        var rejected = resp.status === 400;
        if (resp.status === 429) {
          // Over the fair share: this click waits, the playground stays.
          var refused = new Error("status 429");
          refused.retryAfter = parseInt(resp.headers.get("Retry-After") || "", 10) || 1;
          throw refused;
        }
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
        next.querySelectorAll("details.pg-panel:not([data-more])").forEach(function (d, i) {
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
        } else if (push === "replace" || push === "frame") {
          // A panel opened or closed: the same state, seen otherwise; or
          // any click inside an iframe, whose host owns the history.
          window.history.replaceState(window.history.state, "", target);
        } else if (push) {
          window.history.pushState({ pg: next.id }, "", target);
        }
        if (!atHome) {
          next.setAttribute("data-swapped", "true");
        }
        // A panel just opened starts at its top: only an event moves the
        // diagram to the cursor.
        enhancePlayground(next, push !== "replace");
        var opened = focus && push === "replace" && next.querySelector("#" + next.id + "-" + (focus.panel || ""));
        if (opened) {
          opened.scrollIntoView({ block: "nearest", behavior: "instant" });
        }
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
      .catch(function (err) {
        if (err && err.retryAfter) {
          fig.removeAttribute("aria-busy");
          pgRateNotice(fig, err.retryAfter);
          return fig;
        }
        // The server explains what went wrong (a 400 page) on a full load.
        window.location.assign(url.href);
      });
  }

  // pgRateNotice says, in the playground, that a click was refused for
  // going over the fair share and when to try again; the playground keeps
  // its state (never a whole error page).
  function pgRateNotice(fig, seconds) {
    var note = fig.querySelector("[data-rate-notice]");
    if (!note) {
      note = document.createElement("p");
      note.className = "pg-rate-notice";
      note.setAttribute("role", "status");
      note.setAttribute("data-rate-notice", "");
      fig.insertBefore(note, fig.firstChild);
    }
    note.setAttribute("data-retry-after", String(seconds));
    note.textContent = "Too many runs from you in a short time, so this click was not run. Your playground is as it was: try again in " +
      seconds + (seconds === 1 ? " second." : " seconds.");
    window.clearTimeout(note._idemlabTimer);
    note._idemlabTimer = window.setTimeout(function () {
      if (note.isConnected) {
        note.remove();
      }
    }, seconds * 1000 + 4000);
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
  // Inside an iframe the host page owns the history: a click replaces the
  // frame's entry (the host's Back button does not step through the
  // embed), and Undo walks a list of the states this frame showed.
  var pgInFrame = (function () {
    try {
      return window.self !== window.top;
    } catch (e) {
      return true;
    }
  })();
  var pgFrameUndo = {};

  function pgFramePush(fig) {
    var list = pgFrameUndo[fig.id] || (pgFrameUndo[fig.id] = []);
    list.push(fig.getAttribute("data-url") || window.location.href);
    return "frame";
  }

  function pgCanUndo(fig) {
    if (pgInFrame) {
      return !!(fig && pgFrameUndo[fig.id] && pgFrameUndo[fig.id].length > 0);
    }
    return !!(window.history.state && window.history.state.pg);
  }

  function pgUndo(fig) {
    if (pgInFrame && pgCanUndo(fig)) {
      var active = document.activeElement;
      var focus = fig.contains(active) ? { key: pgFocusKey(active), testid: active.getAttribute("data-testid") } : null;
      pgSwap(fig, new URL(pgFrameUndo[fig.id].pop(), window.location.href), "frame", focus);
    } else if (!pgInFrame && pgCanUndo(fig)) {
      window.history.back();
    } else {
      announce("Nothing to undo: this is the state you opened.");
    }
  }

  // ---------- Predict, then run ----------

  // Answered and skipped questions, kept in this browser: "path#pg-N" →
  // the guess ("1", "2"…) or "skip". While a question is open its verdicts
  // stay hidden (44-learner.css), whatever the learner clicks first; a
  // skip, or an answer given on an earlier visit, shows them.
  var PREDICT_KEY = "idemlab.predictions";

  function pgStore(key, update) {
    var all = {};
    try {
      all = JSON.parse(window.localStorage.getItem(key) || "{}") || {};
    } catch (e) {
      all = {};
    }
    if (typeof all !== "object" || Array.isArray(all)) {
      all = {};
    }
    if (update) {
      update(all);
      try {
        window.localStorage.setItem(key, JSON.stringify(all));
      } catch (e) {
        /* blocked storage: it lasts for this page view */
      }
    }
    return all;
  }

  function pgPlace(fig) {
    var home = new URL(fig.getAttribute("data-home") || window.location.href, window.location.href);
    return home.pathname.replace(/^\/embed(?=\/)/, "") + "#" + fig.id;
  }

  function pgPredictGate(fig) {
    var place = pgPlace(fig);
    var result = fig.querySelector("[data-testid='pg-predict-result']");
    if (result) {
      var guess = new URL(fig.getAttribute("data-url") || window.location.href, window.location.href).searchParams.get("guess") || "answered";
      pgStore(PREDICT_KEY, function (all) {
        all[place] = guess;
      });
      return;
    }
    var form = fig.querySelector("[data-testid='pg-predict-form']");
    if (!form) {
      return;
    }
    var open = function () {
      fig.setAttribute("data-predict-skipped", "");
    };
    if (pgStore(PREDICT_KEY)[place]) {
      open();
    }
    // The form's Skip button (guess=skip, which works without JavaScript)
    // opens the verdicts here at once, with no request, and is kept.
    var skip = form.querySelector("[data-testid='pg-predict-skip']");
    if (skip) {
      skip.addEventListener("click", function (event) {
        event.preventDefault();
        pgStore(PREDICT_KEY, function (all) {
          all[place] = all[place] || "skip";
        });
        var f = skip.closest("[data-pg]");
        if (f) {
          f.setAttribute("data-predict-skipped", "");
          var says = f.querySelector("[data-announce]");
          announce(says ? says.getAttribute("data-verdicts") || says.textContent : "The verdicts are shown.");
        }
      });
    }
    // The server's live region says what the learner can see (the
    // verdicts in data-verdicts): a skip kept from before reads them.
    var said = fig.querySelector("[data-announce]");
    if (said && fig.hasAttribute("data-predict-skipped") && said.hasAttribute("data-verdicts")) {
      said.textContent = said.getAttribute("data-verdicts");
    }
  }

  // ---------- Goals met stay met ----------

  // Goals the learner met, kept in this browser: "path#pg-N" → goal ids.
  // The server ticks a goal the state shown meets (data-goal-met, which a
  // workshop reports); a goal met earlier and not by this state is ticked
  // here as kept (data-goal-kept), so that stepping back in time, another
  // click or a reload does not take it away.
  var GOALS_KEY = "idemlab.goals";

  function pgGoalsKeep(fig) {
    var panel = fig.querySelector("[data-testid='pg-goals']");
    if (!panel) {
      return;
    }
    var place = pgPlace(fig);
    var items = Array.prototype.slice.call(panel.querySelectorAll("[data-goal]"));
    var metNow = items
      .filter(function (li) {
        return li.hasAttribute("data-goal-met");
      })
      .map(function (li) {
        return li.getAttribute("data-goal");
      });
    var kept = pgStore(GOALS_KEY, function (all) {
      var list = Array.isArray(all[place]) ? all[place] : [];
      metNow.forEach(function (id) {
        if (list.indexOf(id) < 0) {
          list.push(id);
        }
      });
      all[place] = list;
    })[place];
    var current = false;
    var done = 0;
    items.forEach(function (li) {
      var id = li.getAttribute("data-goal");
      var met = li.hasAttribute("data-goal-met");
      if (!met && kept.indexOf(id) >= 0) {
        met = true;
        li.classList.add("pg-goal-met");
        li.setAttribute("data-goal-kept", id);
        var tick = li.querySelector(".pg-goal-tick");
        if (tick) {
          tick.textContent = "✓";
        }
        var task = li.querySelector(".pg-goal-task");
        var hidden = task && task.querySelector(".visually-hidden");
        if (hidden) {
          hidden.textContent = "Done earlier: ";
        }
        if (task && !task.querySelector("[data-goal-kept-note]")) {
          var note = document.createElement("span");
          note.className = "pg-muted pg-goal-kept-note";
          note.setAttribute("data-goal-kept-note", "");
          note.textContent = " (done earlier)";
          task.appendChild(note);
        }
        var help = li.querySelector(".pg-goal-help");
        if (help) {
          help.hidden = true;
        }
      }
      if (met) {
        done++;
        li.hidden = false;
      } else {
        li.hidden = current;
        current = true;
      }
    });
    var count = panel.querySelector("[data-testid='pg-goals-count']");
    if (count) {
      count.textContent = done + " of " + items.length + " done";
    }
    var says = fig.querySelector("[data-announce]");
    if (says) {
      says.textContent = says.textContent.replace(/ Goals met: \d+ of \d+\.$/, " Goals met: " + done + " of " + items.length + ".");
    }
  }

  // ---------- Every playground survives a reload ----------

  // The URL holds one block's state (?pg=); the others are kept for this
  // tab in sessionStorage ("idemlab.pg.states": "path#pg-N" → the state's
  // URL) and brought back when the page is loaded again.
  var STATES_KEY = "idemlab.pg.states";

  function pgStates(update) {
    var all = {};
    try {
      all = JSON.parse(window.sessionStorage.getItem(STATES_KEY) || "{}") || {};
    } catch (e) {
      all = {};
    }
    if (update) {
      update(all);
      try {
        window.sessionStorage.setItem(STATES_KEY, JSON.stringify(all));
      } catch (e) {
        /* blocked storage */
      }
    }
    return all;
  }

  function pgRemember(fig) {
    if (fig.id === "playground" || !fig.hasAttribute("data-url")) {
      return;
    }
    var url = new URL(fig.getAttribute("data-url"), window.location.href);
    var place = pgPlace(fig);
    pgStates(function (all) {
      if (url.searchParams.get("pg") === fig.id) {
        all[place] = url.pathname + url.search;
      } else {
        delete all[place];
      }
    });
  }

  function pgRestore(figures) {
    var states = pgStates();
    var here = new URLSearchParams(window.location.search).get("pg");
    figures.forEach(function (fig) {
      var kept = fig.id !== "playground" && fig.id !== here && states[pgPlace(fig)];
      if (!kept || kept === fig.getAttribute("data-url")) {
        return;
      }
      var url = new URL(kept, window.location.href);
      if (url.pathname !== window.location.pathname || url.searchParams.get("pg") !== fig.id) {
        return; // kept on another page (the embed of the same lesson)
      }
      pgSwap(fig, url, false, null).then(function (next) {
        if (next) {
          next.removeAttribute("data-swapped"); // Back does not reset it
        }
      });
    });
  }

  var pgLoading = false;

  function enhancePlayground(fig, swapped) {
    pgPredictGate(fig);
    pgGoalsKeep(fig);
    if (!pgLoading) {
      pgRemember(fig); // a swap: the page's load keeps what it had
      if (shared.focusableScrollers) {
        shared.focusableScrollers(fig);
      }
    }
    fig.querySelectorAll("[data-undo]").forEach(function (b) {
      b.setAttribute("aria-disabled", pgCanUndo(fig) ? "false" : "true");
    });
    if (swapped) {
      pgScrollToCursor(fig); // never on arrival: the diagram starts at its top
    }
    var events = fig.querySelector(".pg-events");
    var current = events && events.querySelector("[data-current]");
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

  // The element that had the focus when a shortcut clicked a control.
  var pgKeyFocus = null;

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
    pgLoading = true;
    figures.forEach(function (fig) {
      enhancePlayground(fig, false);
    });
    pgLoading = false;
    pgRestore(figures);

    // The link a click will follow, if it swaps a playground state in:
    // its figure and URL, else null.
    function pgSwapTarget(event) {
      if (event.defaultPrevented || event.button !== 0 || event.metaKey || event.ctrlKey || event.shiftKey || event.altKey) {
        return null;
      }
      var el = event.target.closest ? event.target.closest("a[href]") : null;
      var fig = el && el.closest("[data-pg]");
      if (!fig || el.hasAttribute("data-embed") || el.hasAttribute("data-no-swap") || el.hasAttribute("data-permalink")) {
        return null;
      }
      var url = new URL(el.href, window.location.href);
      if (url.origin !== window.location.origin || url.pathname !== window.location.pathname) {
        return null;
      }
      return { fig: fig, url: url };
    }

    document.addEventListener("pointerdown", function (event) {
      var target = event.isPrimary ? pgSwapTarget(event) : null;
      if (target && target.fig.getAttribute("aria-busy") !== "true") {
        pgPrefetch(target.fig, target.url);
      }
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
        pgUndo(fig);
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
      // A panel's toggle fetches the state with the panel drawn, in place
      // of this history entry: Undo and Back undo events, not views.
      var push = el.hasAttribute("data-panel") || el.hasAttribute("data-more-open") ? "replace" : true;
      if (push === true && pgInFrame) {
        push = pgFramePush(fig);
      }
      var from = pgKeyFocus || el;
      pgSwap(fig, url, push, { key: pgFocusKey(from), testid: from.getAttribute("data-testid"), panel: el.getAttribute("data-panel") });
    });

    // toggle does not bubble: listened for on its way down.
    document.addEventListener(
      "toggle",
      function (event) {
        // A control panel opened or closed: the state with it so, from the
        // panel's own link (playurl's), in place of this history entry.
        var details = event.target;
        if (!details.matches || !details.matches("details[data-more]")) {
          return;
        }
        var link = details.open ? details.querySelector("[data-more-open]") : null;
        var href = link ? link.getAttribute("href") : !details.open ? details.getAttribute("data-more-close") : null;
        var fig = details.closest("[data-pg]");
        if (!href || !fig || fig.getAttribute("aria-busy") === "true") {
          return;
        }
        var summary = details.querySelector("summary");
        pgSwap(fig, new URL(href, window.location.href), "replace", { key: pgFocusKey(summary), testid: "" });
      },
      true
    );

    document.addEventListener("submit", function (event) {
      var form = event.target;
      var fig = form.closest ? form.closest("[data-pg]") : null;
      if (!fig || (form.getAttribute("method") || "get").toLowerCase() !== "get" || event.defaultPrevented) {
        return;
      }
      event.preventDefault();
      var url = new URL(form.getAttribute("action") || window.location.pathname, window.location.href);
      var data = new FormData(form);
      if (event.submitter && event.submitter.name) {
        data.append(event.submitter.name, event.submitter.value); // a named button: Skip
      }
      url.search = new URLSearchParams(data).toString();
      var submit = event.submitter || form.querySelector("[type=submit]");
      pgSwap(fig, url, pgInFrame ? pgFramePush(fig) : true, submit ? { key: pgFocusKey(submit) } : null);
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
        pgUndo(fig);
        return;
      }
      if (event.shiftKey && key.length > 1) {
        return;
      }
      var control = fig.querySelector("a[data-key='" + (window.CSS && CSS.escape ? CSS.escape(key) : key) + "']");
      if (control) {
        event.preventDefault();
        // A shortcut leaves the focus where the learner had it.
        var active = document.activeElement;
        pgKeyFocus = active && active !== fig && fig.contains(active) ? active : null;
        try {
          control.click();
        } finally {
          pgKeyFocus = null;
        }
      }
    });
  }

  initPlaygrounds();
})();
