/* Roofline Atlas: copy buttons, and keyboard access to boxes that scroll sideways.
   Formulas arrive typeset (KaTeX ran at build time): nothing here renders math. */
(function () {
  "use strict";

  function copyText(text) {
    if (navigator.clipboard && window.isSecureContext) {
      return navigator.clipboard.writeText(text);
    }
    var area = document.createElement("textarea");
    area.value = text;
    area.setAttribute("readonly", "");
    area.style.position = "fixed";
    area.style.opacity = "0";
    document.body.appendChild(area);
    area.select();
    document.execCommand("copy");
    document.body.removeChild(area);
    return Promise.resolve();
  }

  document.addEventListener("click", function (event) {
    var button = event.target.closest ? event.target.closest(".ra-copy") : null;
    if (!button) return;
    copyText(button.dataset.latex).then(function () {
      var label = button.textContent;
      button.textContent = "Copied";
      button.classList.add("ra-copied");
      setTimeout(function () {
        button.textContent = label;
        button.classList.remove("ra-copied");
      }, 1500);
    });
  });

  /* A box that scrolls sideways (a wide formula or table on a narrow screen) must be
     reachable from the keyboard (WCAG 2.1.1). Formulas arrive from the build as named tab
     stops; tables get the same here once Material has wrapped them. A box that comes into
     view and fits loses its tab stop (and gets it back if a narrower window makes it
     overflow). Only boxes in view are measured: measuring all of them would lay out every
     formula of a long page at once. */
  var SCROLL_BOXES = ".md-typeset__scrollwrap, .ra-calc .md-typeset__table, div.arithmatex";
  var visible = new Set();

  function setFocusable(box, on) {
    if (on) {
      box.setAttribute("tabindex", "0");
      box.setAttribute("role", "group");
      if (!box.hasAttribute("aria-label")) {
        box.setAttribute("aria-label", box.matches("div.arithmatex") ? "Formula" : "Table");
      }
    } else if (document.activeElement !== box) {
      box.removeAttribute("tabindex");
    }
  }

  function refresh(boxes) {
    var overflows = boxes.map(function (box) { return box.scrollWidth > box.clientWidth + 1; });
    boxes.forEach(function (box, i) { setFocusable(box, overflows[i]); });  /* reads, then writes */
  }

  var watcher = typeof IntersectionObserver === "undefined" ? null : new IntersectionObserver(
    function (entries) {
      var seen = [];
      entries.forEach(function (entry) {
        if (entry.isIntersecting) { visible.add(entry.target); seen.push(entry.target); }
        else visible.delete(entry.target);
      });
      refresh(seen);
    }, { rootMargin: "200px 0px" });

  function watchBoxes() {
    document.querySelectorAll(SCROLL_BOXES).forEach(function (box) {
      if (box.dataset.raScroll) return;
      box.dataset.raScroll = "1";
      setFocusable(box, true);  /* until it is seen to fit */
      if (watcher) watcher.observe(box);
    });
  }

  window.addEventListener("resize", function () { refresh(Array.from(visible)); });
  if (typeof document$ !== "undefined") {
    document$.subscribe(function () { setTimeout(watchBoxes); });  /* after Material's wrapping */
  } else {
    document.addEventListener("DOMContentLoaded", watchBoxes);
  }
  /* The calculator redraws its result tables on every input. */
  document.querySelectorAll(".ra-calc").forEach(function (calc) {
    if (typeof MutationObserver !== "undefined") {
      new MutationObserver(watchBoxes).observe(calc, { childList: true, subtree: true });
    }
  });
})();
