// The catalog's filters (home page): by field and by the number of claims of a kind with each verdict.
// Plain JavaScript, no library and nothing fetched; a page without the catalog is left alone.
(function () {
  "use strict";
  function setUp() {
    var table = document.getElementById("pw-catalog");
    var form = document.getElementById("pw-filters");
    if (!table || !form) return;
    var rows = Array.prototype.slice.call(table.querySelectorAll("tbody tr.pw-method"));
    var el = function (id) { return document.getElementById(id); };
    var verdicts = ["holds", "inconclusive", "not-reproduced"];

    function count(row, kind, verdict) {
      var kinds = kind === "all" ? ["paper", "mechanism"] : [kind];
      return kinds.reduce(function (sum, k) {
        return sum + parseInt(row.getAttribute("data-" + k + "-" + verdict) || "0", 10);
      }, 0);
    }

    function apply() {
      var field = el("pw-field").value;
      var kind = el("pw-kind").value;
      var judged = el("pw-judged").checked;
      var least = {};
      verdicts.forEach(function (v) {
        var n = parseInt(el("pw-min-" + v).value, 10);
        least[v] = isNaN(n) ? 0 : n;
      });
      var shown = 0;
      rows.forEach(function (row) {
        var ok = (!field || row.getAttribute("data-field") === field) &&
          (!judged || row.getAttribute("data-judged") === "1") &&
          verdicts.every(function (v) { return count(row, kind, v) >= least[v]; });
        row.hidden = !ok;
        if (ok) shown += 1;
      });
      el("pw-shown").textContent = shown + " of " + rows.length + " methods shown";
    }

    form.addEventListener("input", apply);
    form.addEventListener("change", apply);
    form.addEventListener("reset", function () { window.setTimeout(apply, 0); });
    apply();
  }
  if (document.readyState === "loading") {
    document.addEventListener("DOMContentLoaded", setUp);
  } else {
    setUp();
  }
})();
