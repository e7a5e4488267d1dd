/* Roofline Atlas: render formulas with the bundled KaTeX and wire the copy buttons. */
(function () {
  "use strict";

  function renderMath(root) {
    if (typeof katex === "undefined") {
      console.error("Roofline Atlas: KaTeX did not load; formulas stay as TeX");
      return;
    }
    root.querySelectorAll(".arithmatex").forEach(function (el) {
      if (el.dataset.rendered) return;
      var tex = el.textContent.trim();
      var display = tex.indexOf("\\[") === 0 || tex.indexOf("$$") === 0;
      if (display) tex = tex.slice(2, -2);
      else if (tex.indexOf("\\(") === 0) tex = tex.slice(2, -2);
      try {
        katex.render(tex, el, { displayMode: display, throwOnError: true, output: "html" });
        el.dataset.rendered = "1";
      } catch (err) {
        el.classList.add("ra-math-error");
        console.error("Roofline Atlas: cannot render formula: " + err.message);
      }
    });
  }

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

  if (typeof document$ !== "undefined") {
    document$.subscribe(function () { renderMath(document.body); });
  } else {
    document.addEventListener("DOMContentLoaded", function () { renderMath(document.body); });
  }
})();
