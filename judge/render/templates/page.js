// judge's run page: open the collapsed trace that holds a linked event or finding, and filter findings.
// Event handlers are attached here, never written into the page from data.
(function () {
  "use strict";
  function reveal() {
    var id = decodeURIComponent(window.location.hash.slice(1));
    var target = id ? document.getElementById(id) : null;
    if (!target) { return; }
    for (var node = target.parentElement; node; node = node.parentElement) {
      if (node.tagName === "DETAILS") { node.open = true; }
    }
    target.scrollIntoView({ block: "center" });
  }
  window.addEventListener("hashchange", reveal);
  reveal();
  var only = document.getElementById("only-problems");
  if (only) {
    only.addEventListener("change", function () {
      document.body.classList.toggle("only-problems", only.checked);
    });
  }
}());
