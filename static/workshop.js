// Idemlab workshops: a learner's side of a room. Outside a room this file
// does nothing: no cookie, no request, no write. In a room (joined on /room,
// remembered in localStorage "idemlab.workshop"), it shows the room's
// banner, follows the instructor's pushes over server-sent events, and
// sends progress events at least once: each event gets an Idempotency-Key
// made here, waits in localStorage ("idemlab.workshop.queue") and is
// retried with backoff until the server acknowledges it; the server stores
// key and event in one transaction, so a retry never counts twice. It
// reports what only the page sees (a lesson opened, a goal met, a quiz or
// prediction answered, a hint opened, a chaos re-run), which the server labels as
// reported by the browser; checks are recorded by the server when it runs
// them, never from here.
//
// On the instructor's class view it keeps the table live from the stream,
// and keeps the scroll position and the forms' choices across a push.
(function () {
  "use strict";

  var ROOM_KEY = "idemlab.workshop";
  var QUEUE_KEY = "idemlab.workshop.queue";
  var FOLLOW_KEY = "idemlab.workshop.follow";
  var CHAOS_KEY = "idemlab.workshop.chaos";
  var script = document.currentScript;
  var base = script ? script.src.replace(/\/static\/[^/]*$/, "").replace(/^[a-z]+:\/\/[^/]+/, "") : "";

  var store = {
    get: function (key) {
      try {
        return JSON.parse(window.localStorage.getItem(key) || "null");
      } catch (e) {
        return null;
      }
    },
    set: function (key, value) {
      try {
        if (value === null) {
          window.localStorage.removeItem(key);
        } else {
          window.localStorage.setItem(key, JSON.stringify(value));
        }
      } catch (e) {
        /* storage blocked: this page view still works */
      }
    },
  };

  function newKey() {
    if (window.crypto && window.crypto.randomUUID) {
      return window.crypto.randomUUID();
    }
    var b = new Uint8Array(16);
    window.crypto.getRandomValues(b);
    return Array.prototype.map.call(b, function (x) { return ("0" + x.toString(16)).slice(-2); }).join("");
  }

  // reopenWhenClosed keeps a feed going. An EventSource reconnects by
  // itself after a dropped connection, but gives up for good on an error
  // status, such as the 503 a server answers while its workshop store
  // restarts; then reopen runs after a pause. Either way the page shows
  // that it is reconnecting (connection.down) until the feed is open again.
  function reopenWhenClosed(source, reopen) {
    source.addEventListener("error", function () {
      connection.down();
      if (source.readyState === EventSource.CLOSED) {
        window.setTimeout(reopen, 3000);
      }
    });
    source.addEventListener("open", function () {
      connection.up();
    });
  }

  // ---------- Outages ----------

  // connection is what the page knows of the server: a feed that errors
  // means the server (or the replica this page talks to) is gone for now.
  // While it is, the page says so in a status line, and a click on a link
  // or a form of this site waits instead of ending on the browser's "site
  // can't be reached": it goes through by itself once the feed is back.
  var connection = (function () {
    var el = null, isDown = false, since = 0, held = null, timer = null;
    function line() {
      if (!el) {
        el = document.createElement("p");
        el.id = "ws-conn";
        el.className = "ws-conn";
        el.setAttribute("role", "status");
        el.setAttribute("data-testid", "ws-conn");
        var host = document.getElementById("ws-banner") || document.querySelector("[data-testid=ws-class]") || document.body;
        host.insertBefore(el, host.firstChild);
      }
      return el;
    }
    function show() {
      if (!isDown) {
        return;
      }
      var secs = Math.round((Date.now() - since) / 1000);
      var text = "Reconnecting to the server… (lost " + secs + " s ago)";
      if (held) {
        text += " Your click waits and goes through when it is back.";
      }
      var waiting = (store.get(QUEUE_KEY) || []).length;
      if (waiting > 0 && !document.querySelector("[data-testid=ws-class]")) {
        text += " " + waiting + (waiting === 1 ? " piece" : " pieces") + " of progress wait on this device; nothing is lost.";
      }
      var l = line();
      l.hidden = false;
      l.setAttribute("data-state", "reconnecting");
      l.textContent = text;
    }
    function sameSite(url) {
      try {
        return new URL(url, window.location.href).origin === window.location.origin;
      } catch (e) {
        return false;
      }
    }
    document.addEventListener("click", function (ev) {
      if (!isDown || ev.defaultPrevented || ev.button !== 0 || ev.metaKey || ev.ctrlKey || ev.shiftKey || ev.altKey) {
        return;
      }
      var a = ev.target.closest ? ev.target.closest("a[href]") : null;
      if (!a || (a.target && a.target !== "_self") || a.hasAttribute("download") || !sameSite(a.href) || a.getAttribute("href").charAt(0) === "#") {
        return;
      }
      ev.preventDefault();
      ev.stopImmediatePropagation();
      held = { href: a.href };
      show();
    }, true);
    document.addEventListener("submit", function (ev) {
      var form = ev.target;
      if (!isDown || !form || !sameSite(form.action || window.location.href)) {
        return;
      }
      ev.preventDefault();
      ev.stopImmediatePropagation();
      held = { form: form, submitter: ev.submitter || null };
      show();
    }, true);
    return {
      down: function () {
        if (!isDown) {
          isDown = true;
          since = Date.now();
          window.clearInterval(timer);
          timer = window.setInterval(show, 1000);
        }
        show();
      },
      up: function () {
        if (!isDown) {
          return;
        }
        isDown = false;
        window.clearInterval(timer);
        var l = line();
        l.setAttribute("data-state", "connected");
        l.textContent = "Reconnected.";
        window.setTimeout(function () {
          if (!isDown) {
            l.hidden = true;
          }
        }, 4000);
        flush();
        var h = held;
        held = null;
        if (h && h.href) {
          window.location.href = h.href;
        } else if (h && h.form) {
          if (h.form.requestSubmit) {
            h.form.requestSubmit(h.submitter && h.submitter.form === h.form ? h.submitter : undefined);
          } else {
            h.form.submit();
          }
        }
      },
      isDown: function () { return isDown; },
    };
  })();

  // ---------- The instructor's class view ----------

  // followClass keeps the table live. A feed opened again after an error
  // status resumes after the last event it had (?after=, as an
  // EventSource's own reconnect sends Last-Event-ID), so it gets only what
  // changed meanwhile.
  function followClass(main, after) {
    var rows = main.querySelector("[data-testid=ws-rows]");
    var summary = document.getElementById("ws-summary");
    var last = after || "";
    var stream = main.getAttribute("data-stream"); // carries ?page= on pages after the first
    var source = new EventSource(stream + (last ? (stream.indexOf("?") >= 0 ? "&" : "?") + "after=" + encodeURIComponent(last) : ""));
    reopenWhenClosed(source, function () { followClass(main, last); });
    source.addEventListener("row", function (ev) {
      var tpl = document.createElement("tbody");
      tpl.innerHTML = ev.data; // our own server's templ-escaped markup
      var row = tpl.firstElementChild;
      var old = rows.querySelector('tr[data-learner="' + row.getAttribute("data-learner") + '"]');
      if (old) {
        old.replaceWith(row);
      } else {
        rows.appendChild(row);
      }
      sortRows(rows);
    });
    // "remove": the row leaves this page (data: the learner's id): the
    // instructor took the learner out of the room, or the row moved to
    // another page of the view.
    source.addEventListener("remove", function (ev) {
      var row = rows.querySelector('tr[data-learner="' + String(ev.data).replace(/[^0-9]/g, "") + '"]');
      if (row) {
        row.remove();
      }
    });
    // "summary" comes after every batch, with the room's counts: the
    // learners in the room, not only those on this page.
    source.addEventListener("summary", function (ev) {
      summary.innerHTML = ev.data;
      if (ev.lastEventId) {
        last = ev.lastEventId;
      }
      var n = summary.querySelector("[data-learners]");
      var count = main.querySelector("[data-testid=ws-learner-count]");
      if (n && count) {
        count.textContent = n.getAttribute("data-learners");
      }
    });
  }

  // keepPlaceAcrossPushes: a push is a form POST answered with a redirect
  // to the class view, which loads at the top with every select reset.
  // The scroll position and the controls' values are kept for that one
  // load (sessionStorage), so the instructor stays where they were.
  var PLACE_KEY = "idemlab.workshop.class-place";

  function keepPlaceAcrossPushes(main) {
    var place = null;
    try {
      place = JSON.parse(window.sessionStorage.getItem(PLACE_KEY) || "null");
      window.sessionStorage.removeItem(PLACE_KEY);
    } catch (e) {
      place = null;
    }
    if (place && place.path === window.location.pathname) {
      Object.keys(place.values || {}).forEach(function (id) {
        var el = document.getElementById(id);
        if (el && (el.tagName === "SELECT" || el.tagName === "INPUT")) {
          el.value = place.values[id];
        }
      });
      window.scrollTo(0, place.y || 0);
    }
    Array.prototype.forEach.call(document.querySelectorAll("form[method=post]"), function (form) {
      form.addEventListener("submit", function (ev) {
        var values = {};
        Array.prototype.forEach.call(main.querySelectorAll("select[id], input[id][type=number]"), function (el) {
          values[el.id] = el.value;
        });
        try {
          window.sessionStorage.setItem(PLACE_KEY, JSON.stringify({ path: window.location.pathname, y: window.scrollY, values: values }));
        } catch (e) {
          /* storage blocked: the page loads at the top, as without JavaScript */
        }
        // A form with several buttons (the six chaos faults, the two pace
        // modes) gets one idempotency key per button: a double click on
        // one pushes once, and another button is another push.
        var key = form.querySelector("input[type=hidden][name=key]");
        var button = ev.submitter;
        if (key && button && button.name && button.value) {
          if (!key.hasAttribute("data-base-key")) {
            key.setAttribute("data-base-key", key.value);
          }
          key.value = (key.getAttribute("data-base-key") + "-" + button.value).replace(/[^A-Za-z0-9_:.-]/g, "-").slice(0, 100);
        }
      });
    });
  }

  function sortRows(rows) {
    var list = Array.prototype.slice.call(rows.children);
    list.sort(function (a, b) {
      var ra = +a.getAttribute("data-rank"), rb = +b.getAttribute("data-rank");
      return ra !== rb ? ra - rb : +a.getAttribute("data-order") - +b.getAttribute("data-order");
    });
    list.forEach(function (tr) { rows.appendChild(tr); });
  }

  // ---------- A learner in a room ----------

  // The token travels in the URL only inside embeds (no third-party cookies).
  var embedToken = new URLSearchParams(window.location.search).get("ws");

  function api(path, extra) {
    var url = base + path;
    var params = new URLSearchParams(extra || "");
    if (embedToken) {
      params.set("ws", embedToken);
    }
    var q = params.toString();
    return q ? url + "?" + q : url;
  }

  function enqueue(body) {
    var queue = store.get(QUEUE_KEY) || [];
    queue.push({ key: newKey(), body: body });
    store.set(QUEUE_KEY, queue.slice(-500));
    flush();
  }

  var flushing = false;
  var delay = 1000;
  var MAX_DELAY = 10000;

  // flush sends the queue in order, one event at a time, until it is empty
  // or the server cannot be reached (then it tries again later, waiting
  // twice as long each time, up to 10 s; after a 429, when the server says,
  // up to 10 s too).
  function flush() {
    if (flushing) {
      return;
    }
    var queue = store.get(QUEUE_KEY) || [];
    if (queue.length === 0) {
      return;
    }
    flushing = true;
    var item = queue[0];
    fetch(api("/api/v1/room/events"), {
      method: "POST",
      credentials: "same-origin",
      headers: { "Content-Type": "application/json", "Idempotency-Key": item.key },
      body: JSON.stringify(item.body),
    }).then(function (res) {
      flushing = false;
      if (connection.isDown()) {
        connection.up(); // the server answers again
      }
      // 2xx: recorded (or a replay of what was). 422: this key was used for
      // another body, 400: the server will never take it. 401/404/410: the
      // room is gone or ended. All leave the queue; anything else (409 key
      // in progress, 5xx) is retried.
      if (res.ok || res.status === 400 || res.status === 422 || res.status === 401 || res.status === 404 || res.status === 410) {
        var now = store.get(QUEUE_KEY) || [];
        if (now.length && now[0].key === item.key) {
          now.shift();
          store.set(QUEUE_KEY, now);
        }
        if (res.status === 401 || res.status === 404) {
          leaveRoom();
          return;
        }
        delay = 1000;
        flush();
        return;
      }
      var after = res.status === 429 ? +res.headers.get("Retry-After") : 0;
      retryLater(after > 0 ? after * 1000 : 0);
    }, function () {
      flushing = false;
      connection.down(); // the server cannot be reached
      retryLater();
    });
  }

  function retryLater(wait) {
    window.setTimeout(flush, Math.min(Math.max(delay, wait || 0), MAX_DELAY));
    delay = Math.min(delay * 2, MAX_DELAY);
  }

  function leaveRoom() {
    store.set(ROOM_KEY, null);
    store.set(QUEUE_KEY, null);
    var banner = document.getElementById("ws-banner");
    if (banner) {
      banner.remove();
    }
  }

  function banner(room) {
    var el = document.createElement("aside");
    el.id = "ws-banner";
    el.className = "ws-banner";
    el.setAttribute("data-testid", "ws-banner");
    el.setAttribute("aria-label", "Workshop");
    var who = document.createElement("a");
    who.href = base + "/room" + (embedToken ? "?ws=" + encodeURIComponent(embedToken) : "");
    who.textContent = room.room + " · " + room.name;
    el.appendChild(who);
    var hand = document.createElement("button");
    hand.type = "button";
    hand.className = "button";
    hand.setAttribute("data-testid", "ws-banner-hand");
    function label() {
      hand.textContent = store.get(ROOM_KEY) && store.get(ROOM_KEY).hand ? "Lower my hand" : "Raise my hand";
    }
    label();
    hand.addEventListener("click", function () {
      var r = store.get(ROOM_KEY) || room;
      r.hand = !r.hand;
      store.set(ROOM_KEY, r);
      enqueue({ kind: r.hand ? "hand_raised" : "hand_lowered" });
      label();
    });
    el.appendChild(hand);
    var follow = document.createElement("label");
    var box = document.createElement("input");
    box.type = "checkbox";
    box.checked = !!store.get(FOLLOW_KEY);
    box.addEventListener("change", function () { store.set(FOLLOW_KEY, box.checked || null); });
    follow.appendChild(box);
    follow.appendChild(document.createTextNode(" Follow the instructor"));
    el.appendChild(follow);
    var news = document.createElement("p");
    news.className = "ws-banner-news";
    news.setAttribute("data-testid", "ws-banner-news");
    news.setAttribute("aria-live", "polite");
    el.appendChild(news);
    // The countdown has a line of its own: its tick never overwrites the
    // other news (a pace or chaos push that came meanwhile).
    var countdown = document.createElement("p");
    countdown.className = "ws-banner-countdown";
    el.appendChild(countdown);
    document.body.insertBefore(el, document.body.firstChild);
    return { news: news, countdown: countdown };
  }

  // applyChaos adds the instructor's fault to every open playground's
  // script and runs it again, so each learner sees what their handler does;
  // each re-run reports back which of its handlers that held still hold
  // (a chaos_run event per handler), for the class view's survivors count.
  function applyChaos(push) {
    var forms = document.querySelectorAll("form[data-testid=pg-script-form]");
    var pending = [];
    Array.prototype.forEach.call(forms, function (form) {
      var area = form.querySelector("textarea[name=script]");
      var fig = form.closest("[data-pg]");
      if (!area || !fig) {
        return;
      }
      var line = push.line;
      if (line.indexOf("{msg}") >= 0) {
        var re = /\b(?:deliver|redeliver|publish|start|expire)\s+([A-Za-z0-9_.-]+)/g, m, last = null;
        while ((m = re.exec(area.value)) !== null) {
          last = m[1];
        }
        if (!last) {
          return; // nothing delivered yet: no message to break
        }
        line = line.replace("{msg}", last);
      }
      pending.push({ push: push.id, fig: fig.id, line: line, before: verdicts(fig), old: fig });
      area.value = area.value.replace(/\s*$/, "") + "\n" + line;
      form.setAttribute("data-ws-chaos", push.fault);
    });
    // Kept until the re-runs are seen: a re-run that loads a whole page
    // (no script swap) is reported from there.
    store.set(CHAOS_KEY, pending.map(function (p) { return { push: p.push, fig: p.fig, line: p.line, before: p.before }; }));
    // A goal the re-run meets was met by the instructor's fault, not by the
    // learner: goals of a playground whose script starts with a script a
    // chaos push made are not reported (see reportGoals).
    var r = store.get(ROOM_KEY);
    if (r) {
      r.chaosScripts = (r.chaosScripts || []).concat(pending.map(function (p) {
        var area = p.old.querySelector("textarea[name=script]");
        return { fig: p.fig, script: normalScript(area ? area.value : "") };
      })).slice(-50);
      store.set(ROOM_KEY, r);
    }
    watchChaosRuns(pending);
    Array.prototype.forEach.call(forms, function (form) {
      if (!form.hasAttribute("data-ws-chaos")) {
        return;
      }
      if (form.requestSubmit) {
        form.requestSubmit();
      } else {
        form.submit();
      }
    });
    return pending.length;
  }

  // normalScript writes a script one way, whether it came from a textarea
  // (a line per event) or a figure's data-script ("a; b").
  function normalScript(text) {
    return text.split(/[;\n]/).map(function (l) { return l.trim(); }).filter(Boolean).join("; ");
  }

  // verdicts reads a playground's handlers and their verdicts.
  function verdicts(fig) {
    var out = {};
    Array.prototype.forEach.call(fig.querySelectorAll("[data-testid=pg-verdict][data-handler]"), function (li) {
      out[li.getAttribute("data-handler")] = li.getAttribute("data-verdict");
    });
    return out;
  }

  // reportChaosRun sends, for a playground re-run with the fault, whether
  // each handler that held before still holds. The figure must be the
  // re-run (its script ends with the fault's line); else it says nothing.
  function reportChaosRun(p, fig) {
    var script = fig.getAttribute("data-script") || "";
    if (script.slice(-p.line.length) !== p.line) {
      return false;
    }
    var after = verdicts(fig);
    Object.keys(p.before).forEach(function (name) {
      if (p.before[name] === "ok" && after[name]) {
        enqueue({ kind: "chaos_run", push: p.push, handler: slugOf(p.fig + "." + name), survived: after[name] === "ok" });
      }
    });
    return true;
  }

  function slugOf(text) {
    return text.replace(/[^A-Za-z0-9_.-]/g, "-").slice(0, 100);
  }

  function watchChaosRuns(pending) {
    var left = pending.slice();
    function check() {
      left = left.filter(function (p) {
        var fig = document.getElementById(p.fig);
        if (!fig || fig === p.old || fig.getAttribute("aria-busy") === "true") {
          return true;
        }
        reportChaosRun(p, fig);
        return false;
      });
      store.set(CHAOS_KEY, left.length ? left.map(function (p) { return { push: p.push, fig: p.fig, line: p.line, before: p.before }; }) : null);
      if (left.length === 0) {
        observer.disconnect();
      }
    }
    var observer = new MutationObserver(check);
    observer.observe(document.body, { childList: true, subtree: true });
    window.setTimeout(function () { observer.disconnect(); }, 60000);
  }

  // reportChaosAfterLoad reports re-runs that loaded a whole page.
  function reportChaosAfterLoad() {
    var pending = store.get(CHAOS_KEY);
    store.set(CHAOS_KEY, null);
    (pending || []).forEach(function (p) {
      var fig = document.getElementById(p.fig);
      if (fig) {
        reportChaosRun(p, fig);
      }
    });
  }

  // ---------- Goals ----------

  // reportGoals sends goal_reached once per goal and page: a playground
  // marks a met goal with data-goal-met on an element carrying data-goal
  // (its id), or fires the DOM event "idemlab:goal" with detail {goal}.
  // A page without goals sends nothing.
  function reportGoals(room, lesson) {
    if (!lesson) {
      return;
    }
    var sent = {};
    function reached(goal) {
      goal = slugOf(String(goal || ""));
      var key = lesson + "/" + goal;
      var r = store.get(ROOM_KEY) || room;
      var done = r.goals || [];
      if (!goal || sent[key] || done.indexOf(key) >= 0) {
        return;
      }
      sent[key] = true;
      r.goals = done.concat([key]).slice(-200);
      store.set(ROOM_KEY, r);
      enqueue({ kind: "goal_reached", lesson: lesson, goal: goal });
    }
    function byChaos(el) {
      var fig = el.closest("[data-pg]");
      if (!fig) {
        return false;
      }
      var script = normalScript(fig.getAttribute("data-script") || "");
      return ((store.get(ROOM_KEY) || room).chaosScripts || []).some(function (c) {
        return c.fig === fig.id && c.script && (script === c.script || script.indexOf(c.script + "; ") === 0);
      });
    }
    function scan() {
      Array.prototype.forEach.call(document.querySelectorAll("[data-goal-met]"), function (el) {
        if (!byChaos(el)) {
          reached(el.getAttribute("data-goal") || el.getAttribute("data-goal-met"));
        }
      });
    }
    document.addEventListener("idemlab:goal", function (ev) {
      reached(ev.detail && ev.detail.goal);
    });
    new MutationObserver(scan).observe(document.body, { childList: true, subtree: true, attributes: true, attributeFilter: ["data-goal-met"] });
    scan();
  }

  // reportPredictions sends a "predict, then run" answer once per
  // playground and lesson: the server draws the answer (a
  // pg-predict-result with data-correct) in the playground's figure.
  function reportPredictions(room, lesson) {
    function scan() {
      Array.prototype.forEach.call(document.querySelectorAll("[data-testid=pg-predict-result][data-correct]"), function (el) {
        var fig = el.closest("[data-pg]");
        if (!fig || !fig.id) {
          return;
        }
        var key = lesson + "/" + fig.id;
        var r = store.get(ROOM_KEY) || room;
        var done = r.predictions || [];
        if (done.indexOf(key) >= 0) {
          return;
        }
        r.predictions = done.concat([key]).slice(-200);
        store.set(ROOM_KEY, r);
        enqueue({ kind: "prediction_made", lesson: lesson, prediction: slugOf(fig.id), correct: el.getAttribute("data-correct") === "true" });
      });
    }
    new MutationObserver(scan).observe(document.body, { childList: true, subtree: true });
    scan();
  }

  function followPushes(room, parts) {
    var news = parts.news;
    var after = room.after || 0;
    var source = new EventSource(api("/api/v1/room/stream", "after=" + after));
    reopenWhenClosed(source, function () { followPushes(store.get(ROOM_KEY) || room, parts); });
    var timer = null;
    source.addEventListener("push", function (ev) {
      var push = JSON.parse(ev.data);
      var r = store.get(ROOM_KEY) || room;
      r.after = push.id;
      store.set(ROOM_KEY, r);
      news.textContent = "";
      if (push.kind === "pace") {
        var link = document.createElement("a");
        link.href = push.lesson_url + (embedToken ? "?ws=" + encodeURIComponent(embedToken) : "");
        link.textContent = push.lesson + ". " + push.lesson_title;
        news.appendChild(document.createTextNode(push.mode === "goto" ? "Your instructor asks everyone to go to " : "Lessons are open up to "));
        news.appendChild(link);
        if (push.mode === "goto" && store.get(FOLLOW_KEY) && window.location.pathname !== push.lesson_url) {
          window.location.href = link.href;
          return;
        }
        // A lesson this push locks, or a locked one it may open: the
        // server decides what this page shows.
        var here = window.location.pathname.match(/\/lessons\/([^/]+)$/);
        if (document.querySelector("[data-testid=ws-locked]") || (here && (push.closed || []).indexOf(decodeURIComponent(here[1])) >= 0)) {
          window.location.reload();
          return;
        }
      } else if (push.kind === "countdown") {
        var ends = Date.parse(push.ends);
        window.clearInterval(timer);
        var tick = function () {
          var left = Math.max(0, Math.round((ends - Date.now()) / 1000));
          parts.countdown.textContent = "Exercise " + push.exercise + ": " + Math.floor(left / 60) + ":" + ("0" + (left % 60)).slice(-2) + " left";
          if (left === 0) {
            window.clearInterval(timer);
          }
        };
        tick();
        timer = window.setInterval(tick, 1000);
      } else if (push.kind === "chaos") {
        var hit = applyChaos(push);
        news.textContent = "Chaos: " + push.label + ". " + (hit > 0 ?
          "Your open " + (hit === 1 ? "playground got it" : "playgrounds got it") + "; see what your handler does." :
          "Open a playground that has delivered a message and add the fault to its script to see what your handler does.");
      } else if (push.kind === "room_ended") {
        window.clearInterval(timer);
        parts.countdown.textContent = "";
        news.textContent = "The room has ended. Thank you!";
        source.close();
      }
    });
  }

  // reportProgress turns what the learner does on this page into events.
  // A check is not one of them: the server records each check it runs.
  function reportProgress(room) {
    var m = window.location.pathname.match(/\/lessons\/([^/]+)$/);
    // A locked lesson's page shows the lock, not the lesson: not opened.
    if (m && !document.querySelector("[data-testid=ws-locked]")) {
      var slug = decodeURIComponent(m[1]);
      if (room.lesson !== slug) {
        room.lesson = slug;
        store.set(ROOM_KEY, room);
        enqueue({ kind: "lesson_opened", lesson: slug });
      }
    }
    Array.prototype.forEach.call(document.querySelectorAll("[data-testid=exercise]"), function (ex) {
      var id = ex.getAttribute("data-exercise");
      Array.prototype.forEach.call(ex.querySelectorAll("details[data-hint]"), function (d) {
        d.addEventListener("toggle", function () {
          if (d.open) {
            enqueue({ kind: "hint_used", exercise: id, hint: +d.getAttribute("data-hint") });
          }
        });
      });
    });
    reportGoals(room, m ? decodeURIComponent(m[1]) : "");
    reportChaosAfterLoad();
    if (m) {
      reportPredictions(room, decodeURIComponent(m[1]));
    }
    if (m) {
      // A quiz question is answered when the learner picks a choice (its
      // radio group); it is sent once per question and page.
      Array.prototype.forEach.call(document.querySelectorAll("ol.quiz > li"), function (q, i) {
        var answered = false;
        q.addEventListener("change", function () {
          if (!answered) {
            answered = true;
            enqueue({ kind: "quiz_answered", lesson: decodeURIComponent(m[1]), quiz: "q" + (i + 1) });
          }
        });
      });
    }
  }

  function start() {
    var classView = document.querySelector("[data-testid=ws-class][data-stream]");
    if (classView) {
      keepPlaceAcrossPushes(classView);
      if (window.EventSource) {
        followClass(classView);
      }
      return;
    }
    var roomPage = document.querySelector("[data-testid=ws-room]");
    if (roomPage) {
      var prev = store.get(ROOM_KEY) || {};
      store.set(ROOM_KEY, {
        room: roomPage.getAttribute("data-ws-room"),
        code: roomPage.getAttribute("data-ws-code"),
        name: roomPage.getAttribute("data-ws-learner"),
        after: prev.code === roomPage.getAttribute("data-ws-code") ? Math.max(prev.after || 0, +roomPage.getAttribute("data-ws-after")) : +roomPage.getAttribute("data-ws-after"),
        lesson: prev.lesson,
        hand: prev.hand,
        goals: prev.code === roomPage.getAttribute("data-ws-code") ? prev.goals : undefined,
        chaosScripts: prev.code === roomPage.getAttribute("data-ws-code") ? prev.chaosScripts : undefined,
        predictions: prev.code === roomPage.getAttribute("data-ws-code") ? prev.predictions : undefined,
      });
    }
    var room = store.get(ROOM_KEY);
    if (!room) {
      return; // not in a room: nothing changes
    }
    var parts = banner(room);
    if (window.EventSource) {
      followPushes(room, parts);
    }
    reportProgress(room);
    window.addEventListener("online", flush);
    flush();
  }

  // Loaded by theme.js on pages outside the workshop's own, this may run
  // before the page is parsed.
  if (document.readyState === "loading") {
    document.addEventListener("DOMContentLoaded", start);
  } else {
    start();
  }
})();
