// The console's live view (docs/console.md "Live view"). The page is whole
// without this script; with it, the page listens to its stream
// (data-live-src, server-sent events) and, on each "change", fetches itself
// again and swaps its data-live fragments for the fresh server-rendered ones.
// Fragments are replaced by id; nothing else on the page (a form being
// filled in) is touched. The X-Msgx-Live header marks the fetch as the live
// view's: it does not extend the session.
(function () {
  "use strict";
  var root = document.querySelector("[data-live-src]");
  var status = document.getElementById("live-status");
  if (!root || !window.EventSource || !window.fetch || !window.DOMParser) {
    return;
  }
  function show(text) {
    if (status) {
      status.textContent = text;
      status.hidden = false;
    }
  }
  var busy = false;
  var again = false;
  var stopped = false;
  var source = new EventSource(root.getAttribute("data-live-src"));
  function stop(text) {
    stopped = true;
    source.close();
    show(text);
  }
  function refresh() {
    if (busy) {
      again = true;
      return;
    }
    busy = true;
    fetch(window.location.href, {
      headers: { "X-Msgx-Live": "1" },
      credentials: "same-origin",
      redirect: "manual"
    })
      .then(function (r) {
        if (r.type === "opaqueredirect" || r.status === 401 || r.status === 403) {
          stop("Signed out: reload the page to sign in again.");
          return null;
        }
        return r.ok ? r.text() : null;
      })
      .then(function (html) {
        if (!html) {
          return;
        }
        var fresh = new DOMParser().parseFromString(html, "text/html");
        document.querySelectorAll("[data-live]").forEach(function (old) {
          var next = fresh.getElementById(old.id);
          if (next) {
            old.replaceWith(document.importNode(next, true));
          }
        });
        root.setAttribute("data-live-refreshed", String(Date.now()));
      })
      .catch(function () {})
      .then(function () {
        busy = false;
        if (again && !stopped) {
          again = false;
          refresh();
        }
      });
  }
  source.addEventListener("open", function () {
    show("Live: this page updates by itself.");
  });
  source.addEventListener("change", refresh);
  source.addEventListener("error", function () {
    if (source.readyState === EventSource.CLOSED) {
      stop("Live updates stopped: reload the page for the latest.");
    } else if (!stopped) {
      show("Live updates reconnecting…");
    }
  });
})();
