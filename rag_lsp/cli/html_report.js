"use strict";
(function () {
  // The cases of the run, written once as JSON beside this script: each row is
  // [suite, id, figures | null, first relevant rank, missed ([value, rank,
  // reason] as indices into strings), broken | null, change]; the figures (one
  // per metric) are an index into data.figures, which cases share.
  var data = JSON.parse(document.getElementById("cases-data").textContent);
  var strings = data.strings, rows = data.cases, metrics = data.metrics, figures = data.figures;
  var PAGE = 500;
  var CHANGES = ["", "worse", "better", "added"];
  var table = document.getElementById("case-table");
  var head = table.tHead, body = table.tBodies[0];
  var filterInput = document.getElementById("filter");
  var suiteSelect = document.getElementById("suite-filter");
  var statusSelect = document.getElementById("status-filter");
  var count = document.getElementById("count");
  var more = document.getElementById("more"), all = document.getElementById("all");

  function missedText(row) {
    if (row[5] !== null) return "broken: " + row[5];
    var parts = [];
    for (var i = 0; i < row[4].length; i++) {
      var miss = row[4][i], reason = strings[miss[2]];
      parts.push(strings[miss[0]] + (reason ? " (" + reason + ")" : ""));
    }
    return parts.join("; ");
  }

  // The columns: a title, how a row sorts on it, how a cell shows it.
  var columns = [
    {title: "suite", key: function (r) { return data.suites[r[0]]; }},
    {title: "case", key: function (r) { return r[1]; }}
  ];
  metrics.forEach(function (metric, index) {
    columns.push({
      title: data.labels[index], metric: metric, numeric: true,
      key: function (r) { return r[2] === null ? null : figures[r[2]][index]; },
      text: function (r) { var v = r[2] === null ? null : figures[r[2]][index]; return v === null || v === undefined ? "—" : v.toFixed(3); }
    });
  });
  columns.push({
    title: "first relevant rank", numeric: true,
    key: function (r) { return r[3]; },
    text: function (r) { return r[3] === null ? "—" : String(r[3]); }
  });
  columns.push({
    title: "missed (rank or why)", cls: "missed",
    key: function (r) { return r[5] !== null ? -1 : r[4].length; },
    text: missedText
  });
  if (data.compared) {
    columns.push({
      title: "vs baseline", change: true,
      key: function (r) { return r[6] === 0 ? null : r[6]; },
      text: function (r) { return CHANGES[r[6]]; }
    });
  }

  var sortColumn = -1, descending = false, shown = [], limit = PAGE;

  var headRow = document.createElement("tr");
  columns.forEach(function (column, index) {
    var th = document.createElement("th");
    th.textContent = column.title;
    th.scope = "col";
    if (column.numeric) th.className = "num";
    if (column.metric) th.dataset.metric = column.metric;
    th.addEventListener("click", function () { sortBy(index); });
    headRow.appendChild(th);
  });
  head.appendChild(headRow);
  data.suites.forEach(function (id, index) {
    var option = document.createElement("option");
    option.value = String(index);
    option.textContent = id;
    suiteSelect.appendChild(option);
  });
  if (data.compared) {
    ["worse", "better", "added"].forEach(function (name) {
      var option = document.createElement("option");
      option.value = name;
      option.textContent = name + " than the baseline";
      if (name === "added") option.textContent = "added since the baseline";
      statusSelect.appendChild(option);
    });
  }

  function compare(a, b) {
    if (a === b) return 0;
    if (a === null || a === undefined) return 1;  // no value: last, either way
    if (b === null || b === undefined) return -1;
    var order = typeof a === "number" && typeof b === "number" ? a - b : String(a).localeCompare(String(b));
    return descending ? -order : order;
  }

  function sortBy(index) {
    descending = sortColumn === index ? !descending : !!columns[index].numeric && !columns[index].change;
    sortColumn = index;
    var key = columns[index].key;
    var keyed = rows.map(function (row, position) { return [key(row), position, row]; });
    keyed.sort(function (a, b) { return compare(a[0], b[0]) || a[1] - b[1]; });
    rows = keyed.map(function (item) { return item[2]; });
    Array.prototype.forEach.call(headRow.children, function (th, i) {
      if (i === index) th.setAttribute("aria-sort", descending ? "descending" : "ascending");
      else th.removeAttribute("aria-sort");
    });
    apply(false);
  }

  function matches(row, text, suite, status) {
    if (suite !== "" && String(row[0]) !== suite) return false;
    if (status === "missed" && !(row[5] === null && row[4].length)) return false;
    if (status === "complete" && !(row[5] === null && !row[4].length)) return false;
    if (status === "broken" && row[5] === null) return false;
    if (status && CHANGES.indexOf(status) > 0 && CHANGES[row[6]] !== status) return false;
    if (!text) return true;
    if (row[1].toLowerCase().indexOf(text) >= 0) return true;
    return missedText(row).toLowerCase().indexOf(text) >= 0;
  }

  function apply(resetLimit) {
    if (resetLimit) limit = PAGE;
    var text = filterInput.value.trim().toLowerCase();
    var suite = suiteSelect.value, status = statusSelect.value;
    shown = rows.filter(function (row) { return matches(row, text, suite, status); });
    render();
  }

  function render() {
    var fragment = document.createDocumentFragment();
    var end = Math.min(limit, shown.length);
    for (var i = 0; i < end; i++) {
      var row = shown[i], tr = document.createElement("tr");
      tr.dataset.suite = data.suites[row[0]];
      tr.dataset.case = row[1];
      if (row[5] !== null) tr.className = "broken";
      for (var c = 0; c < columns.length; c++) {
        var column = columns[c], td = document.createElement("td");
        var value = column.text ? column.text(row) : column.key(row);
        if (column.change && value) {
          var mark = document.createElement("span");
          mark.className = value;
          mark.textContent = value;
          td.appendChild(mark);
        } else {
          td.textContent = value;
        }
        if (column.numeric) td.className = "num";
        if (column.cls) td.className = column.cls;
        tr.appendChild(td);
      }
      fragment.appendChild(tr);
    }
    body.textContent = "";
    body.appendChild(fragment);
    count.textContent = shown.length.toLocaleString("en") + " of " + data.cases.length.toLocaleString("en") + " cases" +
      (end < shown.length ? ", the first " + end.toLocaleString("en") + " shown" : "");
    more.hidden = all.hidden = end >= shown.length;
  }

  filterInput.addEventListener("input", function () { apply(true); });
  suiteSelect.addEventListener("change", function () { apply(true); });
  statusSelect.addEventListener("change", function () { apply(true); });
  more.addEventListener("click", function () { limit += PAGE; render(); });
  all.addEventListener("click", function () { limit = shown.length; render(); });
  apply(true);
})();
